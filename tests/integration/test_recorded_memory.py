"""A memory store recorded into provrepair's own `Recorder` (integrations/recorded.py): the
agent records its steps natively and its store through the wrapper, and the task holds both,
with ids that never collide, on one clock, each operation the step the loaders make of it.

The Recorder writes to the embedded FalkorDB (it holds the task lock and flushes); what is
checked is the case it records (`as_case()`, the same one `close()` validates and stores).
The round trip through a repair to the agent's store: test_memory_integrations.py."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from provrepair import Recorder
from provrepair.integrations.langgraph import RecordingStore
from provrepair.provenance.errors import CaseError, ConfigError
from provrepair.provenance.models import Case
from provrepair.provenance.store.base import GraphStore

NS = ("memories", "alice")


def seeded(store: Any = None) -> Any:
    store = InMemoryStore() if store is None else store
    store.put(NS, "m_b", {"content": "StoreB sells P0199 for $59.99"})
    store.put(NS, "m_c", {"content": "StoreC sells P0199 for $63.99"})
    store.put(NS, "s2", {"content": "a note the agent keyed like its next step"})
    return store


def step(rec: Recorder, step_id: str, step_type: str, used: list[str], prev: list[str],
         **fields: Any) -> None:
    rec.step(step_id=step_id, step_type=step_type, content=fields.pop("content", step_id),
             used_ids=used, prev_step_ids=prev, next_step_ids=fields.pop("next", []),
             invalidated_memory_ids=[], generated_memory_ids=[],
             timestamp=fields.pop("timestamp", (rec.clock or 0) + 1), turn=1, **fields)


def records(case: Case) -> dict[str, tuple[str | None, str, str | None, str]]:
    """memory id → (agent id if another, status, supersedes, content)."""
    return {m.memory_id: (m.record_id, m.status, m.supersedes, m.content)
            for m in case.memory_store}


def test_each_operation_is_the_step_a_native_recording_has(falkordb_store: GraphStore) -> None:
    with Recorder(falkordb_store, "rec-ops") as rec:
        rec.user_input(input_id="u1", turn=1, content="Where is P0199 cheapest?", timestamp=100)
        # the agent's own ids: one like ours, and a step it names before recording it
        step(rec, "memop_001", "plan", ["u1"], [], next=["s2"])
        store = RecordingStore(seeded(), rec, namespace=NS)
        assert {i.key for i in store.search(NS)} == {"m_b", "m_c", "s2"}
        assert (store.last_step_id, sorted(store.last_memory_ids)) == (
            "memop_002", ["m_b", "m_c", "s2~2"])
        step(rec, "s2", "claim", ["memop_002"], ["memop_002"], content="StoreB, $59.99")
        store.put(NS, "m_c", {"content": "StoreC sells P0199 for $61.99"})   # an update
        assert store.last_memory_ids == ["m_c~2"]
        store.delete(NS, "m_b")
        with store.evidence(["m_c", "u1"]):  # a record's key: its current version
            asyncio.run(store.aput(NS, "m_x", {"content": "compare StoreC next week"}))
        assert {i.key for i in store.search(NS)} == {"m_c", "s2", "m_x"}
        case = rec.as_case()

    assert [(s.step_id, s.step_type, s.used_ids if s.step_type != "memory_read" else
             sorted(s.used_ids), s.prev_step_ids, s.timestamp) for s in case.trace] == [
        ("memop_001", "plan", ["u1"], [], 101),
        ("memop_002", "memory_read", ["m_b", "m_c", "s2~2"], ["memop_001"], 102),
        ("s2", "claim", ["memop_002"], ["memop_002"], 103),
        # a write without evidence: the latest output and what came since
        ("memop_003", "memory_update", ["s2"], ["s2"], 104),
        ("memop_004", "memory_delete", ["s2", "memop_003", "m_c~2"], ["memop_003"], 105),
        ("memop_005", "memory_write", ["m_c~2", "u1"], ["memop_004"], 106),
        ("memop_006", "memory_read", ["m_c~2", "m_x", "s2~2"], ["memop_005"], 107)]
    assert [(s.invalidated_memory_ids, s.generated_memory_ids) for s in case.trace[3:6]] == [
        (["m_c"], ["m_c~2"]), (["m_b"], []), ([], ["m_x"])]
    assert records(case) == {
        "m_b": (None, "deleted", None, "StoreB sells P0199 for $59.99"),
        "m_c": (None, "superseded", None, "StoreC sells P0199 for $63.99"),
        "s2~2": ("s2", "active", None, "a note the agent keyed like its next step"),
        "m_c~2": ("m_c", "active", "m_c", "StoreC sells P0199 for $61.99"),
        "m_x": (None, "active", None, "compare StoreC next week")}
    assert case.memory_namespace == "memories/alice"
    assert store.search(NS) and store.last_step_id is None  # closed: no longer recorded


def test_what_the_store_returns_is_what_the_run_read(falkordb_store: GraphStore,
                                                     tmp_path: Path) -> None:
    """A record changed outside the run is a new root version; one the run deleted that the
    store returns again is active again; a failed write generates and retires nothing."""
    conn = sqlite3.connect(tmp_path / "a.db", check_same_thread=False, isolation_level=None)
    inner = SqliteStore(conn)
    inner.setup()
    seeded(inner)
    with Recorder(falkordb_store, "rec-reads", memory_namespace="memories/alice") as rec:
        store = RecordingStore(inner, rec, namespace=NS)
        store.search(NS, query="StoreB")
        inner.put(NS, "m_c", {"content": "StoreC sells P0199 for $58.99"})  # another process
        store.delete(NS, "m_b")
        inner.put(NS, "m_b", {"content": "StoreB sells P0199 for $59.99"})  # put back
        store.search(NS)
        conn.close()  # the agent's database goes away
        with pytest.raises(sqlite3.ProgrammingError):
            store.put(NS, "m_c", {"content": "never written"})
        case = rec.as_case()
    assert [(s.step_type, s.status, s.invalidated_memory_ids, s.generated_memory_ids)
            for s in case.trace[-1:]] == [("memory_update", "error", ["m_c~2"], [])]
    assert {m: r[1:3] for m, r in records(case).items()} == {
        "m_b": ("active", None), "m_c": ("superseded", None), "m_c~2": ("active", "m_c"),
        "s2": ("active", None)}


def test_a_recorder_of_another_memory_or_conversation_is_refused(
        falkordb_store: GraphStore) -> None:
    with Recorder(falkordb_store, "rec-bob", memory_namespace="memories/bob") as rec:
        with pytest.raises(CaseError, match=r"rec-bob.*memory_namespace.*'memories/bob': one "
                                            r"task, one namespace"):
            RecordingStore(InMemoryStore(), rec, namespace=NS)
        with pytest.raises(ConfigError, match="conversation_id 'conv-9': the Recorder records "
                                              "task 'rec-bob'"):
            RecordingStore(InMemoryStore(), rec, namespace=("memories", "bob"),
                           conversation_id="conv-9")
        store = RecordingStore(InMemoryStore(), rec, namespace=("memories", "bob"))
        with pytest.raises(CaseError, match=r"evidence.*'m_nothing'.*names nothing recorded"), \
                store.evidence(["m_nothing"]):
            store.put(("memories", "bob"), "m_1", {"content": "x"})
        assert store.store.search(("memories", "bob")) == []  # refused before the store acted


def test_records_flushed_before_the_store_is_named_join_its_memory(
        falkordb_store: GraphStore) -> None:
    """The agent recorded (and flushed) a record of its own before it wrapped its store: once
    the wrapper names the task's memory, that record is one of the shared memory's too, as
    those recorded after (provenance/agent_records.py)."""
    with Recorder(falkordb_store, "rec-late") as rec:
        rec.memory(memory_id="m_native", content="likes window seats", source="user_input",
                   last_modified_by=None, created_at=1, last_modified_at=1, derived_from=[],
                   supersedes=None, status="active")
        rec.flush()
        store = RecordingStore(seeded(), rec, namespace=NS)
        store.get(NS, "m_b")
    named = {r["record_id"] for r in falkordb_store.run("list_namespace_records",
                                                         {"namespace": "memories/alice"})}
    assert named == {"m_native", "m_b"}


def test_a_key_named_like_the_step_that_reads_it(falkordb_store: GraphStore) -> None:
    """The operation's own step id is taken before its records are named."""
    inner = InMemoryStore()
    inner.put(NS, "memop_001", {"content": "a key like our step ids"})
    with Recorder(falkordb_store, "rec-clash") as rec:
        store = RecordingStore(inner, rec, namespace=NS)
        store.search(NS)
        case = rec.as_case()
    assert [(s.step_id, s.used_ids) for s in case.trace] == [("memop_001", ["memop_001~2"])]
    assert records(case)["memop_001~2"][0] == "memop_001"
