"""The agent's memory store as source and target, end to end (README, "Your agent's memory
store"): the agent uses its store through a recording wrapper inside its `invoke_agent` span,
the real OpenTelemetry SDK exports to provrepair's live capture, the task is repaired, and the
patch is applied to the agent's own store object: the agent's own search no longer returns
the fault. Real libraries throughout: LangGraph's SqliteStore (with its embedding index) and
AsyncSqliteStore, langmem's memory manager on the suite's OpenAI-compatible double, mem0 kept
local (tests/mem0_memory.py).

These run on the embedded FalkorDB only: what is stored and repaired is a live-captured task
like any other (test_otel_live.py and the repair tests run those on both engines); what is
new here is the wrappers and the appliers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Tracer

from provrepair import Recorder, memory_patch, run_repair
from provrepair.integrations.langgraph import RecordingStore
from provrepair.integrations.mem0 import RecordingMemory
from provrepair.loaders.otel_live import ProvrepairSpanExporter
from provrepair.provenance.errors import CaseError
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.appliers import apply_patch, apply_patch_async
from provrepair.repair.appliers.langgraph import (
    QUARANTINE,
    AsyncLangGraphMemory,
    LangGraphMemory,
    sqlite_module,
)
from provrepair.repair.appliers.mem0 import QUARANTINE_PREFIX, Mem0Memory
from tests.embedding import DIMS, embed
from tests.mem0_memory import close_memory, open_memory, scope_records
from tests.openai_double import ChatDouble, Reply

NS = ("memories", "alice")
PRICES = {"m_b": "StoreB sells the P0199 headset for $59.99",
          "m_c": "StoreC sells the P0199 headset for $63.99"}


@contextmanager
def captured(store: GraphStore) -> Iterator[tuple[TracerProvider, Tracer]]:
    """The agent's tracer provider, exporting to provrepair's live capture of `store`."""
    exporter = ProvrepairSpanExporter(store)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, provider.get_tracer("agent")
    provider.shutdown()
    assert exporter.errors == []


@contextmanager
def agent_run(tracer: Tracer, conversation: str, faults: list[str] | None = None
              ) -> Iterator[None]:
    with tracer.start_as_current_span("invoke_agent shopper") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.conversation.id", conversation)
        if faults:
            root.set_attribute("provrepair.diagnosed_faults", faults)
        yield


def cheapest(texts: list[str]) -> str:
    return "cheapest: " + min(texts, key=lambda t: float(t.rsplit("$", 1)[1]))


def repaired_patch(store: GraphStore, task: str) -> Any:
    report = run_repair(store, task)  # offline: the memory side is applied in full
    assert report.status in ("repaired", "partial"), report
    return memory_patch(store, task)


def test_langgraph_sqlite_store(falkordb_store: GraphStore, tmp_path: Path) -> None:
    index = {"dims": DIMS, "embed": embed, "fields": ["content"]}
    conn = sqlite_module(extensions=True).connect(tmp_path / "agent.db", isolation_level=None,
                                                  check_same_thread=False)
    from langgraph.store.sqlite import SqliteStore

    agent_store = SqliteStore(conn, index=index)  # type: ignore[arg-type]
    agent_store.setup()
    for key, text in PRICES.items():
        agent_store.put(NS, key, {"content": text})
    with captured(falkordb_store) as (provider, tracer):
        store = RecordingStore(agent_store, provider, namespace=NS)
        with agent_run(tracer, "conv-lg", faults=["m_b"]):
            hits = store.search(NS, query="P0199 headset price", limit=5)
            store.put(NS, "m_best", {"content": cheapest([h.value["content"] for h in hits])})
    assert {h.key for h in hits} == {"m_b", "m_c"}  # the fault, before the repair
    case = read_case(falkordb_store, "conv-lg")
    assert case.memory_namespace == "memories/alice"
    assert [s.step_type for s in case.trace] == ["memory_read", "memory_write"]

    patch = repaired_patch(falkordb_store, "conv-lg")
    assert [(o.op, o.memory_id) for o in patch.operations] == [("delete", "m_b"),
                                                               ("quarantine", "m_best")]
    assert apply_patch(patch, LangGraphMemory(store, NS)).applied == ["delete m_b",
                                                                      "quarantine m_best"]
    found = agent_store.search(NS, query="P0199 headset price cheapest", limit=5)
    assert [(h.key, h.value["content"]) for h in found] == [("m_c", PRICES["m_c"])]
    assert agent_store.get((QUARANTINE, *NS), "m_best") is not None


def test_langgraph_async_sqlite_store(falkordb_store: GraphStore, tmp_path: Path) -> None:
    from langgraph.store.sqlite.aio import AsyncSqliteStore

    async def agent() -> list[str]:
        async with AsyncSqliteStore.from_conn_string(str(tmp_path / "agent.db")) as inner:
            await inner.setup()
            for key, text in PRICES.items():
                await inner.aput(NS, key, {"content": text})
            with captured(falkordb_store) as (provider, tracer):
                store = RecordingStore(inner, provider, namespace=NS)
                with agent_run(tracer, "conv-lg-async", faults=["m_b"]):
                    hits = await store.asearch(NS, limit=5)
                    assert {h.key for h in hits} == {"m_b", "m_c"}
                    await store.aput(NS, "m_best",
                                     {"content": cheapest([h.value["content"] for h in hits])})
            patch = repaired_patch(falkordb_store, "conv-lg-async")
            result = await apply_patch_async(patch, AsyncLangGraphMemory(store, NS))
            assert result.applied == ["delete m_b", "quarantine m_best"]
            return [h.key for h in await inner.asearch(NS, limit=5)]
    assert asyncio.run(agent()) == ["m_c"]


def test_langmem_memory_manager(falkordb_store: GraphStore) -> None:
    """langmem's memory manager, unchanged, on the recording store: it searches the store,
    asks the model (the double answers with langmem's `Memory` tool) and writes what it
    learned. The fault reached the manager's context: what it wrote is quarantined."""
    from langchain_openai import ChatOpenAI
    from langgraph.store.memory import InMemoryStore
    from langmem import create_memory_store_manager

    learned = {"content": "The user's home airport is LAX, not SFO"}
    double = ChatDouble(respond=lambda body: Reply(tool_calls=[{
        "id": "call_1", "type": "function",
        "function": {"name": "Memory", "arguments": json.dumps(learned)}}]))
    agent_store = InMemoryStore(index={"dims": DIMS, "embed": embed})
    agent_store.put(NS, "m_air", {"kind": "Memory", "content": {"content": "home airport: SFO"}})
    try:
        with captured(falkordb_store) as (provider, tracer):
            store = RecordingStore(agent_store, provider, namespace=NS)
            manager = create_memory_store_manager(
                ChatOpenAI(base_url=double.start(), api_key="test", model="double-model"),
                namespace=NS, store=store)
            with agent_run(tracer, "conv-langmem", faults=["m_air"]):
                manager.invoke({"messages": [{"role": "user", "content": "I fly from LAX"}]})
    finally:
        double.stop()
    [written] = [i.key for i in agent_store.search(NS) if i.key != "m_air"]
    case = read_case(falkordb_store, "conv-langmem")
    assert {m.memory_id: m.content for m in case.memory_store} == {
        "m_air": '{"content": "home airport: SFO"}', written: json.dumps(learned)}

    assert "m_air" in {i.key for i in manager.search(query="home airport")}
    patch = repaired_patch(falkordb_store, "conv-langmem")
    assert [(o.op, o.memory_id) for o in patch.operations] == [("delete", "m_air"),
                                                               ("quarantine", written)]
    apply_patch(patch, LangGraphMemory(store, NS))
    assert manager.search(query="home airport") == []  # the agent's own search, via langmem
    assert agent_store.get((QUARANTINE, *NS), written).value == {  # type: ignore[union-attr]
        "kind": "Memory", "content": learned}  # the structure moved as it was


def test_mem0_memory(falkordb_store: GraphStore, tmp_path: Path) -> None:
    double = ChatDouble()
    memory = open_memory(tmp_path, double.start())
    try:
        ids = {key: memory.add(text, user_id="alice", infer=False)["results"][0]["id"]
               for key, text in PRICES.items()}
        with captured(falkordb_store) as (provider, tracer):
            agent = RecordingMemory(memory, provider)
            with agent_run(tracer, "conv-mem0", faults=[ids["m_b"]]):
                hits = agent.search("P0199 headset price", filters={"user_id": "alice"})
                assert ids["m_b"] in {h["id"] for h in hits["results"]}
                best = agent.add(cheapest([h["memory"] for h in hits["results"]]),
                                 user_id="alice", infer=False)["results"][0]["id"]
        assert read_case(falkordb_store, "conv-mem0").memory_namespace == "user_id=alice"

        patch = repaired_patch(falkordb_store, "conv-mem0")
        assert [(o.op, o.memory_id) for o in patch.operations] == [("delete", ids["m_b"]),
                                                                   ("quarantine", best)]
        apply_patch(patch, Mem0Memory(agent, "user_id=alice"))
        found = agent.search("P0199 headset price cheapest", filters={"user_id": "alice"})
        assert [h["id"] for h in found["results"]] == [ids["m_c"]]
        assert list(scope_records(memory, user_id=QUARANTINE_PREFIX + "alice").values()) == [
            cheapest(list(PRICES.values()))]
    finally:
        close_memory(memory)
        double.stop()


def test_an_explicit_conversation_without_otel_in_the_agent(falkordb_store: GraphStore) -> None:
    """The sink is provrepair's exporter itself and the conversation is named: each
    operation is a request of that conversation, and the conversation is one task."""
    from langgraph.store.memory import InMemoryStore

    agent_store = InMemoryStore()
    for key, text in PRICES.items():
        agent_store.put(NS, key, {"content": text})
    store = RecordingStore(agent_store, ProvrepairSpanExporter(falkordb_store), namespace=NS,
                           conversation_id="conv-explicit")
    hits = store.search(NS)
    store.put(NS, "m_best", {"content": cheapest([h.value["content"] for h in hits])})
    store.sink.close()
    case = read_case(falkordb_store, "conv-explicit")
    assert [(s.step_type, s.used_ids) for s in case.trace] == [
        ("memory_read", ["m_b", "m_c"]), ("memory_write", ["s_001", "m_b", "m_c"])]
    assert case.memory_namespace == "memories/alice"


# -- recorded natively: provrepair's Recorder as the sink ----------------------------------------

def recorded_agent(rec: Recorder, search: Any, write: Any) -> str:
    """An agent recording its own steps with the Recorder, its memory through a wrapper:
    the user asks, the store is searched, the model answers from what it read (citing the
    read step), the answer is remembered, and the final answer cites that write. Returns
    the answer."""
    rec.user_input(input_id="u1", turn=1, content="Where is the P0199 headset cheapest?",
                   timestamp=1)
    read, texts = search()
    answer = cheapest(texts)
    rec.step(step_id="s1", step_type="claim", content=answer, used_ids=[read],
             prev_step_ids=[read], next_step_ids=[], invalidated_memory_ids=[],
             generated_memory_ids=[], timestamp=rec.clock + 1, turn=1)
    wrote = write(answer)
    rec.step(step_id="s2", step_type="final_answer", content=answer, used_ids=[wrote],
             prev_step_ids=[wrote], next_step_ids=[], invalidated_memory_ids=[],
             generated_memory_ids=[], timestamp=rec.clock + 1, turn=1)
    return answer


def test_langgraph_store_recorded_with_the_recorder(store: GraphStore, tmp_path: Path) -> None:
    """The agent records natively (no OpenTelemetry): the wrapper records each store
    operation into the Recorder's task, with ids of its own and the recorder's clock; the
    repair deletes the fault and the patch reaches the agent's SqliteStore."""
    from langgraph.store.sqlite import SqliteStore

    conn = sqlite_module(extensions=True).connect(tmp_path / "agent.db", isolation_level=None,
                                                  check_same_thread=False)
    agent_store = SqliteStore(conn, index={"dims": DIMS, "embed": embed,  # type: ignore[arg-type]
                                           "fields": ["content"]})
    agent_store.setup()
    for key, text in PRICES.items():
        agent_store.put(NS, key, {"content": text})
    with Recorder(store, "conv-rec", domain="shopping") as rec:
        recording = RecordingStore(agent_store, rec, namespace=NS)

        def search() -> tuple[str, list[str]]:
            hits = recording.search(NS, query="P0199 headset price", limit=5)
            assert {h.key for h in hits} == {"m_b", "m_c"}  # the fault, before the repair
            return str(recording.last_step_id), [h.value["content"] for h in hits]

        def write(answer: str) -> str:
            recording.put(NS, "m_best", {"content": answer})
            return str(recording.last_step_id)
        recorded_agent(rec, search, write)
        rec.faults(["m_b"])
    case = read_case(store, "conv-rec")
    assert case.memory_namespace == "memories/alice"
    assert [(s.step_id, s.step_type, sorted(s.used_ids)) for s in case.trace] == [
        ("memop_001", "memory_read", ["m_b", "m_c"]),
        ("s1", "claim", ["memop_001"]),
        ("memop_002", "memory_write", ["m_b", "s1"]),  # the claim; the record it quotes
        ("s2", "final_answer", ["memop_002"])]

    patch = repaired_patch(store, "conv-rec")
    assert [(o.op, o.memory_id) for o in patch.operations] == [("delete", "m_b"),
                                                               ("quarantine", "m_best")]
    apply_patch(patch, LangGraphMemory(recording, NS))
    found = recording.search(NS, query="P0199 headset price cheapest", limit=5)
    assert [(h.key, h.value["content"]) for h in found] == [("m_c", PRICES["m_c"])]
    assert recording.last_step_id is None  # the recording is closed: searched, not recorded


def test_mem0_memory_recorded_with_the_recorder(falkordb_store: GraphStore,
                                                tmp_path: Path) -> None:
    """The same agent on mem0: mem0's ids are the agent ids, the call's scope the task's
    memory namespace; the patch reaches the agent's `Memory`."""
    double = ChatDouble()
    memory = open_memory(tmp_path, double.start())
    try:
        ids = {key: memory.add(text, user_id="alice", infer=False)["results"][0]["id"]
               for key, text in PRICES.items()}
        with Recorder(falkordb_store, "conv-mem0-rec", domain="shopping") as rec:
            agent = RecordingMemory(memory, rec)

            def search() -> tuple[str, list[str]]:
                hits = agent.search("P0199 headset price", filters={"user_id": "alice"})
                assert ids["m_b"] in {h["id"] for h in hits["results"]}
                return str(agent.last_step_id), [h["memory"] for h in hits["results"]]

            def write(answer: str) -> str:
                best.append(agent.add(answer, user_id="alice", infer=False)["results"][0]["id"])
                return str(agent.last_step_id)
            best: list[str] = []
            recorded_agent(rec, search, write)
            rec.faults([ids["m_b"]])
            with pytest.raises(CaseError, match=r"'user_id=bob'.*the recording's agent memory "
                                                r"is 'user_id=alice'"):
                agent.add("bob's note", user_id="bob", infer=False)  # refused before mem0 acts
        assert scope_records(memory, user_id="bob") == {}
        case = read_case(falkordb_store, "conv-mem0-rec")
        assert case.memory_namespace == "user_id=alice"
        assert [s.step_type for s in case.trace] == ["memory_read", "claim", "memory_write",
                                                     "final_answer"]
        assert case.trace[2].generated_memory_ids == best

        patch = repaired_patch(falkordb_store, "conv-mem0-rec")
        assert [(o.op, o.memory_id) for o in patch.operations] == [("delete", ids["m_b"]),
                                                                   ("quarantine", best[0])]
        apply_patch(patch, Mem0Memory(agent, "user_id=alice"))
        found = agent.search("P0199 headset price cheapest", filters={"user_id": "alice"})
        assert [h["id"] for h in found["results"]] == [ids["m_c"]]
    finally:
        close_memory(memory)
        double.stop()
