"""The recording wrappers (provrepair.integrations) emit what the OTel loader reads: the real
OpenTelemetry SDK collects the spans of real LangGraph stores driven through the wrapper, and
loaders/otel.py reads them into a case (no graph database: tests/integration/
test_memory_integrations.py stores and repairs them)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode, Tracer

from provrepair.integrations.langgraph import RecordingStore
from provrepair.loaders.otel import cases_from_spans
from provrepair.loaders.otel_live import span_of
from provrepair.provenance.errors import ConfigError
from provrepair.provenance.models import Case

NS = ("memories", "alice")


@pytest.fixture
def collected() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


@contextmanager
def agent_run(tracer: Tracer, conversation: str = "conv-1") -> Iterator[None]:
    with tracer.start_as_current_span("invoke_agent") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.conversation.id", conversation)
        yield


def memory_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans()
            if s.attributes and s.attributes.get("gen_ai.operation.name") != "invoke_agent"]


def read_case(exporter: InMemorySpanExporter) -> Case:
    [case] = cases_from_spans([span_of(s) for s in exporter.get_finished_spans()])
    return case


def seeded(store: Any) -> Any:
    store.put(NS, "m_b", {"content": "StoreB sells P0199 for $59.99", "tags": ["price"]})
    store.put(NS, "m_c", {"content": "StoreC sells P0199 for $63.99"})
    store.put(("memories", "bob"), "m_b", {"content": "bob's m_b"})
    return store


def test_every_operation_of_a_sync_store_is_recorded_in_the_run(
        collected: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = collected
    store = RecordingStore(seeded(InMemoryStore()), provider, namespace=NS)
    tracer = provider.get_tracer("agent")
    with agent_run(tracer):
        assert [i.key for i in store.search(NS)] == ["m_b", "m_c"]
        assert store.get(NS, "m_nothing") is None          # found nothing: nothing read
        assert store.get(("memories", "bob"), "m_b") is not None  # another namespace
        store.put(NS, "m_best", {"content": "cheapest: StoreB $59.99"})
        store.delete(NS, "m_c")
        assert store.list_namespaces() != []                 # not a memory operation
    spans = memory_spans(exporter)
    root = next(s for s in exporter.get_finished_spans() if s.name == "invoke_agent")
    assert [s.attributes["gen_ai.operation.name"] for s in spans] == [  # type: ignore[index]
        "search_memory", "search_memory", "upsert_memory", "delete_memory"]
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id  # type: ignore[union-attr]
               for s in spans)
    assert {s.attributes["gen_ai.memory.store.id"] for s in spans} == {"memories/alice"}  # type: ignore[index]
    found = json.loads(spans[0].attributes["gen_ai.memory.records"])  # type: ignore[arg-type, index]
    assert found == [{"id": "m_b", "content": "StoreB sells P0199 for $59.99"},
                     {"id": "m_c", "content": "StoreC sells P0199 for $63.99"}]
    # an item of another namespace keeps its namespace in its id: never this m_b
    other = json.loads(spans[1].attributes["gen_ai.memory.records"])  # type: ignore[arg-type, index]
    assert other == [{"id": "memories/bob/m_b", "content": "bob's m_b"}]

    case = read_case(exporter)  # what the loader makes of it
    assert case.memory_namespace == "memories/alice"
    assert [s.step_type for s in case.trace] == ["memory_read", "memory_read", "memory_write",
                                                 "memory_delete"]
    status = {m.memory_id: m.status for m in case.memory_store}
    assert status == {"m_b": "active", "m_c": "deleted", "memories/bob/m_b": "active",
                      "m_best": "active"}


def test_an_async_store_and_a_structured_value(
        collected: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    """The async methods go through `abatch`; a value holding a structure under the value key
    (langmem's memory manager) is recorded as its JSON, sorted keys."""
    provider, exporter = collected
    store = RecordingStore(InMemoryStore(), provider, namespace=NS)

    async def agent() -> None:
        with agent_run(provider.get_tracer("agent")):
            await store.aput(NS, "m_air", {"kind": "Memory", "content": {"content": "LAX"}})
            assert [i.key for i in await store.asearch(NS)] == ["m_air"]
            assert (await store.aget(NS, "m_air")) is not None
            await store.adelete(NS, "m_air")
    asyncio.run(agent())
    spans = memory_spans(exporter)
    assert [s.attributes["gen_ai.operation.name"] for s in spans] == [  # type: ignore[index]
        "upsert_memory", "search_memory", "search_memory", "delete_memory"]
    assert json.loads(spans[0].attributes["gen_ai.memory.records"]) == [  # type: ignore[arg-type, index]
        {"id": "m_air", "content": '{"content": "LAX"}'}]


def test_a_failed_write_is_recorded_as_failed(
        collected: tuple[TracerProvider, InMemorySpanExporter], tmp_path: Any) -> None:
    """The agent's store raises (its database closed): the write's span has status ERROR
    (the loader's failed mutation: no record), and the error reaches the agent unchanged."""
    provider, exporter = collected
    conn = sqlite3.connect(tmp_path / "a.db", check_same_thread=False, isolation_level=None)
    inner = SqliteStore(conn)
    inner.setup()
    store = RecordingStore(inner, provider, namespace=NS)
    conn.close()
    with agent_run(provider.get_tracer("agent")), pytest.raises(sqlite3.ProgrammingError):
        store.put(NS, "m_x", {"content": "x"})
    [span] = memory_spans(exporter)
    assert span.status.status_code == StatusCode.ERROR
    assert "ProgrammingError" in (span.status.description or "")
    case = read_case(exporter)
    assert [s.status for s in case.trace] == ["error"] and case.memory_store == []


def test_an_explicit_conversation_outside_any_span(
        collected: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    """Without an OTel context, `conversation_id=` wraps each operation in an `invoke_agent`
    span of that conversation: what a live capture keeps as a run."""
    provider, exporter = collected
    store = RecordingStore(seeded(InMemoryStore()), provider, namespace=NS,
                           conversation_id="conv-7")
    store.search(NS)
    agents = [s for s in exporter.get_finished_spans() if s.name == "invoke_agent"]
    assert [a.attributes["gen_ai.conversation.id"] for a in agents] == ["conv-7"]  # type: ignore[index]
    assert read_case(exporter).task_id == "conv-7"


def test_bad_arguments_are_one_line_errors() -> None:
    with pytest.raises(ConfigError, match="'memories//a' has an empty part"):
        RecordingStore(InMemoryStore(), None, namespace=("memories", "", "a"))
    with pytest.raises(ConfigError, match="needs conversation_id"):
        RecordingStore(InMemoryStore(), InMemorySpanExporter())
    with pytest.raises(ConfigError, match="conversation_id is empty"):
        RecordingStore(InMemoryStore(), None, conversation_id="")
    with pytest.raises(ConfigError, match="cannot record memory operations to a dict: give"):
        RecordingStore(InMemoryStore(), {})


def test_evidence_rides_on_the_write_span(
        collected: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    """Writes inside `evidence(ids)` carry `provrepair.evidence_ids`: the loader makes them
    the write's dependencies, instead of the latest output and what came since."""
    provider, exporter = collected
    store = RecordingStore(seeded(InMemoryStore()), provider, namespace=NS)
    with agent_run(provider.get_tracer("agent")):
        store.search(NS)
        with store.evidence(["m_c"]):
            store.put(NS, "m_best", {"content": "cheapest: StoreC"})
        store.put(NS, "m_other", {"content": "unrelated"})
    spans = memory_spans(exporter)
    assert [s.attributes.get("provrepair.evidence_ids") for s in spans] == [  # type: ignore[union-attr]
        None, ("m_c",), None]
    assert store.last_step_id is None  # steps are named when the run is read
    case = read_case(exporter)
    assert [s.used_ids for s in case.trace] == [["m_b", "m_c"], ["m_c"], ["s_001", "m_b", "m_c",
                                                                          "m_best"]]


def test_recording_into_a_recorder_needs_no_opentelemetry() -> None:
    """Without the otel extra the wrappers import and take a Recorder; only an OpenTelemetry
    sink asks for the extra, in one line."""
    script = """
import sys
class NoOtel:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "opentelemetry":
            raise ImportError(name)
sys.meta_path.insert(0, NoOtel())
from langgraph.store.memory import InMemoryStore
from provrepair.integrations import mem0, recorded
from provrepair.integrations.langgraph import RecordingStore
from provrepair.provenance.errors import ConfigError
try:
    RecordingStore(InMemoryStore(), None)
except ConfigError as exc:
    print(exc)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == ("recording to OpenTelemetry needs the otel extra: pip "
                                   "install 'provrepair[otel]' (or record with provrepair's "
                                   "Recorder)")
