"""OTLP protobuf trace files → the OTLP/JSON-shaped documents loaders/otel.py reads (the `otel`
extra brings `opentelemetry-proto`).

A file holds one `TracesData` or `ExportTraceServiceRequest` (the same message on the wire:
field 1, the resource spans), as `encode_spans` of the SDK's OTLP exporters serializes it, or
several, each after its length as a 4-byte big-endian integer (the Collector's file exporter
with `format: proto`). The conversion follows the OTLP/JSON mapping: ids as hex, 64-bit
integers as decimal strings, enums as integers.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from provrepair.loaders.case_files import max_case_bytes
from provrepair.provenance.errors import ConfigError, InputError

PROTOBUF_SUFFIXES = (".pb", ".binpb")


def is_protobuf_file(path: Path) -> bool:
    """By extension (.pb, .binpb, .otlp.pb), else by content: not text starting like JSON."""
    if path.suffix in PROTOBUF_SUFFIXES:
        return True
    if path.suffix in (".json", ".jsonl") or not path.is_file():
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(64).lstrip()
    except OSError:
        return False  # the JSON reader names the error
    return bool(head) and head[:1] not in (b"{", b"[")


def read_protobuf(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(location, document) for each message of an OTLP protobuf file."""
    yield from protobuf_documents(_read(path), str(path))


def protobuf_documents(data: bytes, name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(location, document) for each message of OTLP protobuf bytes (one message, or
    length-prefixed ones) named `name`."""
    frames = _frames(data)
    for n, frame in enumerate(frames, 1):
        where = name if len(frames) == 1 else f"{name}: message {n}"
        yield where, traces_document(_parse(frame, where))


def traces_document(message: Any) -> dict[str, Any]:
    """A parsed TracesData / ExportTraceServiceRequest → an OTLP/JSON-shaped document."""
    return {"resourceSpans": [
        {"resource": {"attributes": [_kv(a) for a in rs.resource.attributes]},
         "scopeSpans": [{"scope": {"name": ss.scope.name, "version": ss.scope.version},
                         "spans": [_span(s) for s in ss.spans]} for ss in rs.scope_spans]}
        for rs in message.resource_spans]}


def _read(path: Path) -> bytes:
    limit = max_case_bytes()
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise InputError(f"{path}: larger than {limit} bytes (PROVREPAIR_MAX_CASE_BYTES); refused")
    if not data:
        raise InputError(f"{path}: is empty; expected an OTLP protobuf trace")
    return data


def _frames(data: bytes) -> list[bytes]:
    """Length-prefixed messages if the prefixes tile the file exactly, else one message (a
    TracesData starts with the tag byte 0x0a, which as a length would exceed any such file)."""
    frames, at = [], 0
    while at + 4 <= len(data):
        size = int.from_bytes(data[at:at + 4], "big")
        if size == 0 or at + 4 + size > len(data):
            return [data]
        frames.append(data[at + 4:at + 4 + size])
        at += 4 + size
    return frames if at == len(data) and frames else [data]


def _parse(frame: bytes, where: str) -> Any:
    try:
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.trace.v1.trace_pb2 import TracesData
    except ImportError as exc:
        raise ConfigError("OTLP protobuf files need the otel extra: "
                          "pip install 'provrepair[otel]'") from exc
    message = TracesData()
    try:
        message.ParseFromString(frame)
    except DecodeError as exc:
        raise InputError(f"{where}: not an OTLP protobuf trace ({exc})") from exc
    if not message.resource_spans:
        raise InputError(f"{where}: not an OTLP protobuf trace (no resource spans)")
    return message


def _span(s: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": s.trace_id.hex(), "spanId": s.span_id.hex(), "name": s.name,
        "kind": s.kind, "flags": s.flags,
        "startTimeUnixNano": str(s.start_time_unix_nano),
        "endTimeUnixNano": str(s.end_time_unix_nano),
        "attributes": [_kv(a) for a in s.attributes],
        "events": [{"name": e.name, "timeUnixNano": str(e.time_unix_nano),
                    "attributes": [_kv(a) for a in e.attributes]} for e in s.events],
        "links": [{"traceId": link.trace_id.hex(), "spanId": link.span_id.hex(),
                   "attributes": [_kv(a) for a in link.attributes]} for link in s.links],
        "status": {"code": s.status.code, "message": s.status.message}}
    if s.parent_span_id:
        out["parentSpanId"] = s.parent_span_id.hex()
    return out


def _kv(kv: Any) -> dict[str, Any]:
    return {"key": kv.key, "value": _value(kv.value)}


def _value(v: Any) -> dict[str, Any]:
    # recursion is bounded by the parser's own depth limit (a deeper message is a
    # DecodeError in _parse; tests/unit/test_otlp_limits.py)
    kind = v.WhichOneof("value")
    if kind == "string_value":
        return {"stringValue": v.string_value}
    if kind == "bool_value":
        return {"boolValue": v.bool_value}
    if kind == "int_value":
        return {"intValue": str(v.int_value)}
    if kind == "double_value":
        return {"doubleValue": v.double_value}
    if kind == "array_value":
        return {"arrayValue": {"values": [_value(x) for x in v.array_value.values]}}
    if kind == "kvlist_value":
        return {"kvlistValue": {"values": [_kv(x) for x in v.kvlist_value.values]}}
    if kind == "bytes_value":
        return {"bytesValue": base64.b64encode(v.bytes_value).decode("ascii")}
    return {}
