"""The input formats of `ingest --from otel` without a server: the OpenInference and OpenLLMetry
mapping (loaders/otel_dialects.py) and the OTLP protobuf reader (loaders/otlp_protobuf.py) on
spans the real SDK made and its own encoder serialized."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from provrepair.loaders.otel_dialects import genai_attributes, normalize_documents
from provrepair.loaders.otel_live import otlp_json
from provrepair.loaders.otlp_files import otlp_documents
from provrepair.loaders.otlp_json import (
    any_value_json,
    attributes_json,
    document,
    document_spans,
    span_attributes,
    value_of,
)
from provrepair.loaders.otlp_protobuf import is_protobuf_file


def messages(attributes: dict[str, Any], key: str) -> Any:
    return json.loads(attributes[key])


def test_openinference_llm_messages() -> None:
    mapped = genai_attributes({
        "openinference.span.kind": "LLM", "session.id": "s1",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "be brief",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.contents.0.message_content.type": "text",
        "llm.input_messages.1.message.contents.0.message_content.text": "price?",
        "llm.input_messages.1.message.contents.1.message_content.type": "image",
        "llm.input_messages.10.message.role": "tool",  # index 10 sorts after 2, not after 1
        "llm.input_messages.10.message.tool_call_id": "c1",
        "llm.input_messages.10.message.content": "$5",
        "llm.input_messages.2.message.role": "assistant",
        "llm.input_messages.2.message.tool_calls.0.tool_call.id": "c1",
        "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "get_price",
        "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": "{}",
    })
    assert mapped["gen_ai.operation.name"] == "chat" and mapped["gen_ai.conversation.id"] == "s1"
    assert messages(mapped, "gen_ai.input.messages") == [
        {"role": "system", "parts": [{"type": "text", "content": "be brief"}]},
        {"role": "user", "parts": [{"type": "text", "content": "price?"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "get_price",
                                         "arguments": "{}"}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "$5"}]}]
    assert "gen_ai.output.messages" not in mapped  # none recorded: none invented


def test_a_genai_attribute_the_span_has_wins_and_plain_spans_are_untouched() -> None:
    plain = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": "[]"}
    assert genai_attributes(plain) is plain
    mixed = genai_attributes({"openinference.span.kind": "LLM",
                              "gen_ai.operation.name": "generate_content",
                              "llm.output_messages.0.message.content": "hi"})
    assert mixed["gen_ai.operation.name"] == "generate_content"
    assert messages(mixed, "gen_ai.output.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "hi"}]}]


def test_openllmetry_completion_with_list_content_and_kinds() -> None:
    mapped = genai_attributes({
        "llm.request.type": "completion", "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": json.dumps([{"type": "text", "text": "a"},
                                               {"type": "image_url", "image_url": {}},
                                               {"type": "text", "text": "b"}])})
    assert mapped["gen_ai.operation.name"] == "text_completion"
    assert messages(mapped, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "a b"}]}]
    assert genai_attributes({"traceloop.span.kind": "task"}).get("gen_ai.operation.name") is None
    agent = genai_attributes({"traceloop.span.kind": "agent",
                              "traceloop.association.properties.conversation_id": "c9"})
    assert agent["gen_ai.operation.name"] == "invoke_agent"
    assert agent["gen_ai.conversation.id"] == "c9"


def _span(n: int, attributes: dict[str, Any], trace: str = "ab" * 16) -> dict[str, Any]:
    return {"traceId": trace, "spanId": f"{n:016x}", "startTimeUnixNano": str(n),
            "attributes": attributes_json(attributes)}


def _tool_ids(documents: list[Any]) -> list[Any]:
    return [span_attributes(s).get("gen_ai.tool.call.id")
            for d in documents for s in document_spans(d) if s["spanId"] != f"{1:016x}"]


def test_tool_spans_take_their_call_ids_across_the_lines_of_a_file() -> None:
    """Two parallel calls of one tool, answered by two tool spans in later lines: in order."""
    llm = _span(1, {"openinference.span.kind": "LLM",
                    **{f"llm.output_messages.0.message.tool_calls.{k}.tool_call.{f}": v
                       for k, call in enumerate(["c1", "c2"])
                       for f, v in (("id", call), ("function.name", "lookup"))}})
    tools = [_span(n, {"openinference.span.kind": "TOOL", "tool.name": "lookup"})
             for n in (2, 3)]
    stranger = _span(4, {"openinference.span.kind": "TOOL", "tool.name": "lookup"}, "cd" * 16)
    docs = normalize_documents([document([llm]), document(tools[:1]), document(tools[1:]),
                                document([stranger])])
    assert _tool_ids(docs) == ["c1", "c2", None]  # another trace's tool span takes nothing


def test_retrieved_documents_without_ids_are_named_by_content() -> None:
    attributes = {"openinference.span.kind": "RETRIEVER",
                  "retrieval.documents.0.document.content": "same text"}
    first, again = (json.loads(genai_attributes(attributes)["gen_ai.memory.records"])
                    for _ in range(2))
    assert first == again and first[0]["id"].startswith("doc-")


def sdk_spans() -> Any:
    memory = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("unit")
    with tracer.start_as_current_span("invoke_agent", attributes={
            "gen_ai.operation.name": "invoke_agent", "n": 7, "ok": True, "xs": ("a", "b")}), \
            tracer.start_as_current_span("search_memory", attributes={
                "gen_ai.operation.name": "search_memory", "score": 0.5}):
        pass
    provider.shutdown()
    return memory.get_finished_spans()


def test_protobuf_reads_as_the_json_the_exporter_writes(tmp_path: Path) -> None:
    """Field for field, the protobuf reader gives what OtlpJsonFile writes of the same spans
    (ids, times, attributes of every type, parent)."""
    spans = sdk_spans()
    path = tmp_path / "t.otlp.pb"
    path.write_bytes(encode_spans(spans).SerializeToString())
    ((_, doc),) = otlp_documents(path)
    keys = ("traceId", "spanId", "parentSpanId", "name", "startTimeUnixNano", "attributes")
    from_pb = [{k: s.get(k) for k in keys} for s in document_spans(doc)]
    from_json = [{k: s.get(k) for k in keys} for s in document_spans(otlp_json(spans))]
    assert from_pb == from_json


def test_values_round_trip_through_the_one_decoder() -> None:
    values = ["s", 7, 0.5, True, ["a", 1], {"k": [False]}]
    assert [value_of(any_value_json(v)) for v in values] == values


def test_protobuf_detection(tmp_path: Path) -> None:
    spans = sdk_spans()
    (tmp_path / "a.bin").write_bytes(encode_spans(spans).SerializeToString())
    (tmp_path / "b.otlp").write_text(json.dumps(otlp_json(spans)))
    (tmp_path / "c.json").write_bytes(b"\x0a\x00")
    assert [is_protobuf_file(tmp_path / n) for n in ("a.bin", "b.otlp", "c.json")] == [
        True, False, False]
