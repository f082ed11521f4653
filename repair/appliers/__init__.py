"""Carry a memory patch (repair/patch.py) to the store an agent reads.

An applier is four operations on one memory store, by record id (`MemoryStore` below); every
store the agent may use gets a small module: `jsonl.py` (a plain JSONL memory file),
`langgraph.py` (LangGraph's `BaseStore`: InMemoryStore, SqliteStore, PostgresStore…). For
another store, implement the protocol: mem0's `get`/`add`/`update`/`delete` map one to one,
and quarantine is a move to a namespace or collection the agent does not search.

`apply_patch` checks every operation against the store first (optimistic check: a record
must still hold the content the repair saw, or already be in its patched state), then applies
them in the patch's order; already-applied operations are skipped, so applying twice is a
no-op, and a store that changed since the repair is refused before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from provrepair.provenance.errors import ConfigError, PatchConflict
from provrepair.repair.patch import MemoryPatch, PatchOperation


class MemoryStore(Protocol):
    def get(self, memory_id: str) -> str | None:
        """The content of an active (retrievable) record, or None."""

    def quarantined(self, memory_id: str) -> str | None:
        """The content of a quarantined record, or None."""

    def put(self, memory_id: str, content: str) -> None:
        """Make the record active with this content."""

    def remove(self, memory_id: str) -> None:
        """Delete the record (active or quarantined)."""

    def quarantine(self, memory_id: str) -> None:
        """Move the active record out of retrieval, keeping it for audit."""


@dataclass
class ApplyResult:
    applied: list[str] = field(default_factory=list)   # "op memory_id"
    already: list[str] = field(default_factory=list)   # operations found in effect


def apply_patch(patch: MemoryPatch, store: MemoryStore) -> ApplyResult:
    states = [(op, _state(op, store)) for op in patch.operations]
    conflicts = [f"{op.op} {op.memory_id}: {state}" for op, state in states
                 if state not in ("pending", "done")]
    if conflicts:
        raise PatchConflict(f"the memory store changed since repair run {patch.run_id} of "
                            f"task {patch.task_id!r}; nothing applied ({'; '.join(conflicts[:3])})")
    result = ApplyResult()
    for op, state in states:
        label = f"{op.op} {op.memory_id}"
        if state == "done":
            result.already.append(label)
            continue
        _apply(op, store)
        result.applied.append(label)
    return result


def _state(op: PatchOperation, store: MemoryStore) -> str:
    """"pending" (applicable), "done" (already in effect), or why it conflicts."""
    active, hidden = store.get(op.memory_id), store.quarantined(op.memory_id)
    if op.op == "add":
        if active is None:
            return "pending"
        return "done" if active == op.content else "holds other content"
    expected = op.expected_content
    if op.op == "delete":
        if active is None and hidden is None:
            return "done"
        return "pending" if expected in (active, hidden) else "holds other content"
    if op.op == "quarantine":
        if hidden == expected and active is None:
            return "done"
        return "pending" if active == expected else "missing or changed"
    if active == expected:  # restore
        return "done"
    return "pending" if hidden == expected or active is None else "holds other content"


def _apply(op: PatchOperation, store: MemoryStore) -> None:
    if op.op == "delete":
        store.remove(op.memory_id)
    elif op.op == "quarantine":
        store.quarantine(op.memory_id)
    elif op.op == "restore":
        store.put(op.memory_id, op.expected_content or "")
    else:
        store.put(op.memory_id, op.content or "")


def open_memory_store(target: str, namespace: tuple[str, ...] = ("memories",)) -> MemoryStore:
    """`jsonl:PATH` or `langgraph-sqlite:PATH` (see the modules)."""
    kind, _, where = target.partition(":")
    if kind == "jsonl" and where:
        from provrepair.repair.appliers.jsonl import JsonlMemory

        return JsonlMemory(where)
    if kind == "langgraph-sqlite" and where:
        from provrepair.repair.appliers.langgraph import sqlite_store

        return sqlite_store(where, namespace)
    raise ConfigError(f"--to {target!r}: expected jsonl:PATH or langgraph-sqlite:PATH")
