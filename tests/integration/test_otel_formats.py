"""`ingest --from otel` beyond OTLP/JSON GenAI: OTLP protobuf files as the SDK's own encoder
writes them (opentelemetry-exporter-otlp-proto-common's `encode_spans`), and traces in the
OpenInference (Arize Phoenix) and OpenLLMetry (Traceloop) attribute sets, written by the real
SDK. What cannot be read is one line naming trace and span, exit 2, nothing written."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer

from provrepair.loaders.otel_live import OtlpJsonFile, ProvrepairSpanExporter
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from tests import otel_agent
from tests.conftest import Cli
from tests.openai_double import ChatDouble

TASK = "otel_shopping_001"


@contextmanager
def recorded(path: Path | None = None) -> Iterator[tuple[Tracer, InMemorySpanExporter]]:
    """A tracer whose ended spans are kept in memory (and written as OTLP/JSON to `path`)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    if path is not None:
        provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFile(path)))
    try:
        yield provider.get_tracer("formats"), memory
    finally:
        provider.shutdown()


def example_spans(json_path: Path) -> Sequence[ReadableSpan]:
    """The bundled example agent's run (instrumented openai client on the test double)."""
    double = ChatDouble(otel_agent.example_script("StoreB is cheapest at $59.99."))
    client = openai.OpenAI(base_url=double.start(), api_key="test")
    memory = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFile(json_path)))
    try:
        with otel_agent.openai_instrumented(provider):
            otel_agent.run(provider.get_tracer("agent"), client, dict(otel_agent.EXAMPLE_MEMORY),
                           TASK, ["m_price_b"])
    finally:
        double.stop()
        provider.shutdown()
    return memory.get_finished_spans()


def protobuf(spans: Sequence[ReadableSpan]) -> bytes:
    return bytes(encode_spans(spans).SerializeToString())


def ingested(cli: Cli, path: Path) -> dict[str, Any]:
    done = cli("ingest", "--from", "otel", "--json", str(path))
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)
    return dict(result)


def test_a_protobuf_file_ingests_as_its_json_twin(cli: Cli, tmp_path: Path) -> None:
    """The same spans as OTLP/JSON and as the SDK's protobuf encoding give the same case: the
    second ingest finds the content hash unchanged."""
    spans = example_spans(tmp_path / "trace.jsonl")
    (tmp_path / "trace.otlp.pb").write_bytes(protobuf(spans))
    assert ingested(cli, tmp_path / "trace.otlp.pb")["status"] == "created"
    assert ingested(cli, tmp_path / "trace.jsonl")["status"] == "unchanged"
    case = json.loads(cli("show", "--task", TASK, "--original", "--json").stdout)
    assert [s["step_type"] for s in case["trace"]] == [
        "memory_read", "plan", "tool_action", "tool_observation", "final_answer", "memory_write"]


def test_length_prefixed_messages_and_detection_by_content(cli: Cli, tmp_path: Path) -> None:
    """Several exports in one file, each after its 4-byte big-endian length (the Collector's
    file exporter), under a name that says nothing: read by content."""
    spans = example_spans(tmp_path / "trace.jsonl")
    framed = b"".join(len(m).to_bytes(4, "big") + m
                      for m in (protobuf(spans[:3]), protobuf(spans[3:])))
    (tmp_path / "export.bin").write_bytes(framed)
    assert ingested(cli, tmp_path / "export.bin")["status"] == "created"
    assert ingested(cli, tmp_path / "trace.jsonl")["status"] == "unchanged"


@pytest.mark.parametrize(("name", "data", "needle"), [
    ("bad.pb", b"\x0a\xff\xff\xff\x0f garbage", "not an OTLP protobuf trace"),
    ("empty.binpb", b"", "is empty"),
    ("nothing.pb", b"\x10\x01", "no resource spans"),
])
def test_unreadable_protobuf_is_one_line(cli: Cli, tmp_path: Path, name: str, data: bytes,
                                         needle: str) -> None:
    (tmp_path / name).write_bytes(data)
    done = cli("ingest", "--from", "otel", str(tmp_path / name))
    assert done.returncode == 2 and needle in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("InputError: ")
    assert json.loads(cli("tasks", "--json").stdout) == []


# -- OpenInference and OpenLLMetry --------------------------------------------------------

CALL_ARGS = json.dumps({"store": "StoreA"})


def span(tracer: Tracer, name: str, attributes: dict[str, Any]) -> Any:
    """A span with a dialect's attributes, set as its instrumentation sets them."""
    return tracer.start_as_current_span(name, attributes=attributes)


# what a RAG app puts in the prompt: the retrieved documents
CONTEXT = {"llm.input_messages.0.message.role": "system",
           "llm.input_messages.0.message.content":
               "Context:\nStoreB sells P0199 for $59.99\nStoreC sells P0199 for $63.99"}


def openinference_run(tracer: Tracer, session: str, *, tool_id: bool = False) -> None:
    with span(tracer, "agent", {"openinference.span.kind": "AGENT", "session.id": session}):
        with span(tracer, "retrieve", {
                "openinference.span.kind": "RETRIEVER", "input.value": "P0199 prices",
                "retrieval.documents.0.document.id": "m_price_b",
                "retrieval.documents.0.document.content": "StoreB sells P0199 for $59.99",
                "retrieval.documents.1.document.content": "StoreC sells P0199 for $63.99"}):
            pass
        with span(tracer, "ChatCompletion", {
                "openinference.span.kind": "LLM", "llm.model_name": "gpt-x",
                **CONTEXT,
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.content": "Where is P0199 cheapest?",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_price",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments":
                    CALL_ARGS}):
            pass
        with span(tracer, "get_price", {
                "openinference.span.kind": "TOOL", "tool.name": "get_price",
                "input.value": CALL_ARGS, "output.value": "StoreA: $68.50",
                **({"tool.id": "call_1"} if tool_id else {})}):
            pass
        with span(tracer, "ChatCompletion", {
                "openinference.span.kind": "LLM",
                **CONTEXT,
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.content": "Where is P0199 cheapest?",
                "llm.input_messages.2.message.role": "tool",
                "llm.input_messages.2.message.tool_call_id": "call_1",
                "llm.input_messages.2.message.content": "StoreA: $68.50",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.contents.0.message_content.type": "text",
                "llm.output_messages.0.message.contents.0.message_content.text":
                    "StoreB, at $59.99."}):
            pass


def openllmetry_run(tracer: Tracer, session: str) -> None:
    with span(tracer, "shopping.workflow", {
            "traceloop.span.kind": "workflow", "traceloop.entity.name": "shopping",
            "traceloop.association.properties.session_id": session}):
        with span(tracer, "openai.chat", {
                "llm.request.type": "chat", "gen_ai.system": "openai",
                "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Price at StoreA?",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.tool_calls.0.id": "call_9",
                "gen_ai.completion.0.tool_calls.0.name": "get_price",
                "gen_ai.completion.0.tool_calls.0.arguments": CALL_ARGS}):
            pass
        with span(tracer, "get_price.tool", {
                "traceloop.span.kind": "tool", "traceloop.entity.name": "get_price",
                "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"store": "StoreA"}}),
                "traceloop.entity.output": json.dumps("StoreA: $68.50")}):
            pass
        with span(tracer, "openai.chat", {
                "llm.request.type": "chat",
                "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Price at StoreA?",
                "gen_ai.prompt.1.role": "assistant",
                "gen_ai.prompt.1.tool_calls.0.id": "call_9",
                "gen_ai.prompt.1.tool_calls.0.name": "get_price",
                "gen_ai.prompt.2.role": "tool", "gen_ai.prompt.2.tool_call_id": "call_9",
                "gen_ai.prompt.2.content": "StoreA: $68.50",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.content": json.dumps(
                    [{"type": "text", "text": "$68.50 at StoreA."}])}):
            pass


def shown(cli: Cli, task: str) -> dict[str, Any]:
    done = cli("show", "--task", task, "--original", "--json")
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
def test_an_openinference_trace(cli: Cli, tmp_path: Path, encoding: str) -> None:
    path = tmp_path / ("oi.jsonl" if encoding == "json" else "oi.pb")
    with recorded(tmp_path / "oi.jsonl") as (tracer, memory):
        openinference_run(tracer, "oi-session-1")
    if encoding == "protobuf":
        path.write_bytes(protobuf(memory.get_finished_spans()))
    assert ingested(cli, path)["task_id"] == "oi-session-1"
    case = shown(cli, "oi-session-1")
    assert [u["content"] for u in case["session"]] == ["Where is P0199 cheapest?"]
    steps = [(s["step_type"], s["content"]) for s in case["trace"]]
    assert [t for t, _ in steps] == ["memory_read", "plan", "tool_action", "tool_observation",
                                     "final_answer"]
    assert steps[3][1] == "StoreA: $68.50" and steps[4][1] == "StoreB, at $59.99."
    records = {m["memory_id"]: m["content"] for m in case["memory_store"]}
    assert records["m_price_b"] == "StoreB sells P0199 for $59.99"
    # a document without an id is named by its content, stably
    (unnamed,) = [i for i in records if i.startswith("doc-")]
    assert records[unnamed] == "StoreC sells P0199 for $63.99"
    # the model call whose prompt carried the documents depends on both
    assert {"m_price_b", unnamed} <= set(case["trace"][1]["used_ids"])


def test_an_openllmetry_trace(cli: Cli, tmp_path: Path) -> None:
    with recorded(tmp_path / "tl.jsonl") as (tracer, _):
        openllmetry_run(tracer, "tl-session-1")
    assert ingested(cli, tmp_path / "tl.jsonl")["task_id"] == "tl-session-1"
    case = shown(cli, "tl-session-1")
    steps = [(s["step_type"], s["content"]) for s in case["trace"]]
    assert [t for t, _ in steps] == ["plan", "tool_action", "tool_observation", "final_answer"]
    assert steps[1][1].startswith("get_price(") and "StoreA" in steps[1][1]
    assert steps[3][1] == "$68.50 at StoreA."
    assert [u["content"] for u in case["session"]] == ["Price at StoreA?"]


def test_a_dialect_tool_span_without_a_call_is_one_line(cli: Cli, tmp_path: Path) -> None:
    """An OpenInference TOOL span with no id and no model call of its name to take one from
    cannot be tied to a call: refused naming the span and its trace."""
    with recorded(tmp_path / "orphan.jsonl") as (tracer, memory):
        with span(tracer, "agent", {"openinference.span.kind": "AGENT", "session.id": "oi-x"}), \
                span(tracer, "lookup", {"openinference.span.kind": "TOOL", "tool.name": "lookup",
                                        "output.value": "42"}):
            pass
        tool = next(s for s in memory.get_finished_spans() if s.name == "lookup")
    done = cli("ingest", "--from", "otel", str(tmp_path / "orphan.jsonl"))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    context = tool.get_span_context()
    assert context is not None
    assert format(context.span_id, "016x") in done.stderr
    assert format(context.trace_id, "032x") in done.stderr
    assert json.loads(cli("tasks", "--json").stdout) == []



def test_an_openinference_agent_recorded_live(falkordb_store: GraphStore) -> None:
    """The live exporter reads the dialect too: the AGENT span's session is the task."""
    exporter = ProvrepairSpanExporter(falkordb_store)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    openinference_run(provider.get_tracer("oi-agent"), "oi-live-1")
    provider.shutdown()
    assert exporter.errors == [] and exporter.stored == ["oi-live-1"]
    case = read_case(falkordb_store, "oi-live-1")
    assert [s.step_type for s in case.trace] == [
        "memory_read", "plan", "tool_action", "tool_observation", "final_answer"]
