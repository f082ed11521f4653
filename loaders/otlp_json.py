"""Python values ↔ OTLP/JSON (the encoding loaders/otel.py reads): `AnyValue`s, attribute
lists, and a document around spans. Used where spans are made here rather than read: the live
exporter's file and journal (loaders/otel_live.py, loaders/otel_runs.py), the protobuf
converter and the dialect mapping (loaders/otlp_protobuf.py, loaders/otel_dialects.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def any_value_json(value: Any) -> dict[str, Any]:
    """A Python value → an OTLP/JSON AnyValue (64-bit integers as strings, as the spec says)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [any_value_json(v) for v in value]}}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": attributes_json(value)}}
    if value is None:
        return {}
    return {"stringValue": str(value)}


def value_of(value: dict[str, Any]) -> Any:
    """An OTLP/JSON AnyValue → a Python value (intValue arrives as a string in OTLP/JSON).
    The one decoder: loaders/otel.py reads spans with it too."""
    for key, convert in _DECODERS:
        if key in value:
            return convert(value[key])
    return None


_DECODERS: tuple[tuple[str, Any], ...] = (
    ("stringValue", lambda v: v), ("intValue", int), ("doubleValue", float), ("boolValue", bool),
    ("arrayValue", lambda v: [value_of(x) for x in v.get("values", [])]),
    ("kvlistValue", lambda v: {kv["key"]: value_of(kv["value"]) for kv in v.get("values", [])}))


def span_attributes(span: dict[str, Any]) -> dict[str, Any]:
    """An OTLP/JSON span's attributes, decoded ({} if malformed: the reader refuses it)."""
    try:
        return {a["key"]: value_of(a["value"]) for a in span.get("attributes") or []}
    except (KeyError, TypeError, ValueError, AttributeError):
        return {}


def attributes_json(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": any_value_json(v)} for k, v in attributes.items()]


def document(spans: list[dict[str, Any]], scope: str = "provrepair") -> dict[str, Any]:
    """OTLP/JSON spans → one `{"resourceSpans": [...]}` document."""
    return {"resourceSpans": [{"resource": {"attributes": []},
                               "scopeSpans": [{"scope": {"name": scope}, "spans": spans}]}]}


def document_spans(raw: Any) -> list[dict[str, Any]]:
    """The span objects of an OTLP/JSON document; anything of another shape is passed over
    here (loaders/otel.py refuses it, naming where)."""
    def listed(parent: Any, key: str) -> list[Any]:
        value = parent.get(key) if isinstance(parent, dict) else None
        return value if isinstance(value, list) else []

    return [span for resource in listed(raw, "resourceSpans")
            for scope in listed(resource, "scopeSpans") for span in listed(scope, "spans")
            if isinstance(span, dict)]
