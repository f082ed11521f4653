"""Bad outside input is one line naming what and where, never a traceback (issue 36,
loaders/limits.py): values nested past the limit (in an attribute, in tool arguments, in
protobuf), OTLP structure of the wrong type, ids that are not ids (integers, a megabyte),
times that are not times (400 digits)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from provrepair.loaders.limits import MAX_DEPTH
from provrepair.loaders.openai_messages import transcript_case
from provrepair.loaders.otel import cases_from_spans, otlp_spans
from provrepair.loaders.otlp_protobuf import protobuf_documents
from provrepair.provenance.errors import CaseError, InputError, UserError

TRACE, SPAN = "ab" * 16, "cd" * 8


def span(**fields: Any) -> dict[str, Any]:
    return {"traceId": TRACE, "spanId": SPAN, "startTimeUnixNano": "1000",
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}],
            **fields}


def doc(*spans: Any) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}


def deep_value(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"stringValue": "x"}
    for _ in range(levels):
        value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
    return value


def chat_with_arguments(arguments: str) -> dict[str, Any]:
    output = [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f",
                                               "arguments": arguments}]}]
    return span(attributes=[
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(output)}}])


def records_span(records: list[dict[str, Any]]) -> dict[str, Any]:
    return span(attributes=[
        {"key": "gen_ai.operation.name", "value": {"stringValue": "search_memory"}},
        {"key": "gen_ai.memory.records", "value": {"stringValue": json.dumps(records)}}])


BAD: list[tuple[str, Any, str]] = [
    ("an attribute nested 200 deep", doc(span(attributes=[
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "x", "value": deep_value(200)}])), "nested more than"),
    ("tool arguments nested 5,000 deep", doc(chat_with_arguments("[" * 5000 + "]" * 5000)),
     "nested too deeply"),
    ("tool arguments nested 100 deep", doc(chat_with_arguments("[" * 100 + "]" * 100)),
     f"nested more than {MAX_DEPTH} levels"),
    ("resourceSpans a string", {"resourceSpans": "abc"}, "no resourceSpans list"),
    ("scopeSpans a string", {"resourceSpans": [{"scopeSpans": "x"}]}, "expected a list"),
    ("a resource a string", {"resourceSpans": ["x"]}, "expected an object"),
    ("a span a number", doc(5), "a span is an object"),
    ("attributes an object", doc(span(attributes={"a": 1})), "expected a list"),
    ("an integer trace id", doc(span(traceId=12345)), "traceId 12345 is not an OTLP/JSON id"),
    ("a 1 MB span id", doc(span(spanId="a" * 1_000_000)), "characters) is not an OTLP/JSON id"),
    ("a 2 MB record id", doc(records_span([{"id": "r" * 2_000_000}])), "ids are 1 to 1024"),
    ("a 400-digit time", doc(span(startTimeUnixNano="9" * 400)), "at most 20 digits"),
    ("a 400-digit integer time", doc(span(startTimeUnixNano=int("9" * 400))), "outside 0 to"),
    ("a negative time", doc(span(startTimeUnixNano=-5)), "outside 0 to"),
    ("a time as a float", doc(span(startTimeUnixNano=1.5)), "nanoseconds since the epoch"),
]


@pytest.mark.parametrize(("raw", "needle"), [(raw, needle) for _, raw, needle in BAD],
                         ids=[name for name, _, _ in BAD])
def test_bad_otlp_is_one_line(raw: Any, needle: str) -> None:
    with pytest.raises(UserError) as caught:
        cases_from_spans(otlp_spans(raw, "trace.json"))
    message = str(caught.value)
    assert needle in message and "\n" not in message and len(message) < 600


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field (wire type 2)."""
    size, length = bytearray(), len(payload)
    while True:
        size.append((length & 0x7F) | (0x80 if length > 0x7F else 0))
        length >>= 7
        if not length:
            return bytes([number << 3 | 2]) + bytes(size) + payload


def test_protobuf_nested_past_the_limit_is_one_line() -> None:
    """An attribute value nested 400 deep, encoded by hand (the protobuf library will not
    build one): the parser's depth limit, one line naming the file."""
    value = _field(1, b"x")  # AnyValue.string_value
    for _ in range(400):  # AnyValue.kvlist_value → KeyValueList.values → KeyValue
        value = _field(6, _field(1, _field(1, b"k") + _field(2, value)))
    span_pb = _field(1, bytes.fromhex(TRACE)) + _field(2, bytes.fromhex(SPAN)) + \
        _field(9, _field(1, b"x") + _field(2, value))
    data = _field(1, _field(2, _field(2, span_pb)))  # resource spans → scope spans → span
    with pytest.raises(InputError) as caught:
        list(protobuf_documents(data, "trace.pb"))
    assert str(caught.value).startswith("trace.pb: ") and "\n" not in str(caught.value)


TRANSCRIPT_BAD: list[tuple[str, Any, str]] = [
    ("tool arguments nested 5,000 deep", {"messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function",
         "function": {"name": "f", "arguments": "[" * 5000 + "]" * 5000}}]}]},
     "nested too deeply"),
    ("a 2 MB record id", {"messages": [{"role": "user", "content": "hi"}], "memory_events": [
        {"after": 0, "op": "create", "id": "m" * 2_000_000, "content": "x"}]}, "ids are 1 to"),
    ("lineage that is not ids", {"messages": [{"role": "user", "content": "hi"}],
                                 "memory_events": [{"after": 0, "op": "search", "records": [
                                     {"id": "m", "derived_from": [5]}]}]},
     "derived_from: expected an id"),
    ("a multi-record write without ids", {"messages": [{"role": "user", "content": "hi"}],
                                          "memory_events": [{"after": 0, "op": "create",
                                                             "records": [{"content": "x"}]}]},
     "memory_events[0].records"),
    ("reasoning that is not text", {"messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yes", "reasoning_content": {"a": 1}}]},
     "messages[1].reasoning_content"),
]


@pytest.mark.parametrize(("raw", "needle"), [(raw, needle) for _, raw, needle in TRANSCRIPT_BAD],
                         ids=[name for name, _, _ in TRANSCRIPT_BAD])
def test_bad_transcripts_are_one_line(raw: Any, needle: str) -> None:
    with pytest.raises((CaseError, InputError)) as caught:
        transcript_case({"task_id": "t", **raw}, "t")
    message = str(caught.value)
    assert needle in message and "\n" not in message and len(message) < 600
