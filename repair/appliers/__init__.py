"""Carry a memory patch (repair/patch.py) to the store an agent reads.

An applier is five operations on one memory store, by the agent's record id (`MemoryStore`
below), plus a transaction. Every store the agent may use gets a small module: `jsonl.py` (a
plain JSONL memory file), `langgraph.py` (LangGraph's `BaseStore`: InMemoryStore,
SqliteStore, PostgresStore and their async forms). For another store, implement the protocol:
mem0's `get`/`add`/`update`/`delete` map one to one, and quarantine is a move to a namespace or
collection the agent does not search.

`apply_patch`, inside one transaction of the store (a SQL transaction, or a file lock):
1. reads every record the patch names (and the records it keeps);
2. checks the target: a store holding none of the patch's records, in its expected or its
   patched state, is not the agent's memory (another namespace, another value key, another
   database): `TargetMismatch`, nothing written;
3. checks every operation (optimistic check: a record must still hold the content the repair
   saw, or already be in its patched state): any other state is `PatchConflict`, nothing
   written;
4. applies the pending operations in the patch's order; already-applied ones are skipped, so
   applying twice is a no-op. A change by someone else between 1 and 4 cannot happen (the
   transaction) or makes the commit fail (a conflict, never an overwrite).
"""

from __future__ import annotations

import importlib
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass, field
from typing import Any, Protocol

from provrepair.provenance.errors import ConfigError, PatchConflict, TargetMismatch
from provrepair.provenance.registry import Registry
from provrepair.repair.patch import MemoryPatch


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

    def transaction(self) -> AbstractContextManager[None]:
        """Reads and writes inside are one atomic unit: committed when the block ends, rolled
        back (nothing written) when it raises."""

    def close(self) -> None:
        """Release what opening the store took (a connection)."""


Snapshot = dict[str, tuple[str | None, str | None]]  # agent id → (active, quarantined) content


@dataclass
class ApplyResult:
    applied: list[str] = field(default_factory=list)   # "op memory_id"
    already: list[str] = field(default_factory=list)   # operations found in effect


def apply_patch(patch: MemoryPatch, store: MemoryStore) -> ApplyResult:
    """Apply `patch` to `store` atomically (see the module docstring). A store that cannot be
    read or written (a read-only file, a database error) is `TargetMismatch`, one line."""
    try:
        with store.transaction():
            snapshot = {i: (store.get(i), store.quarantined(i)) for i in read_ids(patch)}
            pending = plan_apply(patch, snapshot)
            for op in pending:
                write(op, store)
    except _store_errors() as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TargetMismatch(f"the memory store cannot take the patch ({type(exc).__name__}: "
                             f"{reason}); nothing written") from exc
    return result_of(patch, pending)


def _store_errors() -> tuple[type[Exception], ...]:
    """The errors of the stores' own drivers (a library error never reaches the user raw)."""
    import sqlite3

    errors: tuple[type[Exception], ...] = (OSError, sqlite3.Error)
    for module in ("pysqlite3.dbapi2", "psycopg"):
        with suppress(ImportError):
            errors = (*errors, importlib.import_module(module).Error)
    return errors


async def apply_patch_async(patch: MemoryPatch, store: Any) -> ApplyResult:
    """`apply_patch` for an async store (`AsyncLangGraphMemory`): the same checks and order."""
    async with store.transaction():
        snapshot = {i: (await store.get(i), await store.quarantined(i)) for i in read_ids(patch)}
        pending = plan_apply(patch, snapshot)
        for op in pending:
            await _write_async(op, store)
    return result_of(patch, pending)


def read_ids(patch: MemoryPatch) -> list[str]:
    return [*(op.memory_id for op in patch.operations), *patch.kept]


def plan_apply(patch: MemoryPatch, snapshot: Snapshot) -> list[Any]:
    """The operations still to apply, after the target and conflict checks (pure)."""
    states = [(op, _state(op, *snapshot[op.memory_id])) for op in patch.operations]
    found = [i for i in read_ids(patch) if any(v is not None for v in snapshot[i])]
    if (patch.operations or patch.kept) and not found:
        raise TargetMismatch(
            f"the target holds none of the {len(read_ids(patch))} record(s) of task "
            f"{patch.task_id!r} the patch names (e.g. {read_ids(patch)[0]!r}): not the agent's "
            "memory (check the path, --namespace and --value-key); nothing written")
    conflicts = [f"{op.op} {op.memory_id}: {state}" for op, state in states
                 if state not in ("pending", "done")]
    if conflicts:
        raise PatchConflict(f"the memory store changed since repair run {patch.run_id} of "
                            f"task {patch.task_id!r}; nothing applied ({'; '.join(conflicts[:3])})")
    return [op for op, state in states if state == "pending"]


def result_of(patch: MemoryPatch, pending: list[Any]) -> ApplyResult:
    result = ApplyResult()
    for op in patch.operations:
        (result.applied if op in pending else result.already).append(f"{op.op} {op.memory_id}")
    return result


def _state(op: Any, active: str | None, hidden: str | None) -> str:
    """"pending" (applicable), "done" (already in effect), or why it conflicts."""
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
    if op.op == "put":
        if active == op.content:
            return "done"
        return "pending" if active == expected else "missing or holds other content"
    if active == expected:  # restore
        return "done"
    return "pending" if hidden == expected or active is None else "holds other content"


def write(op: Any, store: MemoryStore) -> None:
    if op.op == "delete":
        store.remove(op.memory_id)
    elif op.op == "quarantine":
        store.quarantine(op.memory_id)
    else:  # restore, put, add
        store.put(op.memory_id, op.expected_content if op.op == "restore" else op.content)


async def _write_async(op: Any, store: Any) -> None:
    if op.op == "delete":
        await store.remove(op.memory_id)
    elif op.op == "quarantine":
        await store.quarantine(op.memory_id)
    else:
        await store.put(op.memory_id, op.expected_content if op.op == "restore" else op.content)


@dataclass(frozen=True)
class Target:
    """Where the agent's memory is: `--to KIND:PATH` with its namespace, value key, index."""

    spec: str
    namespace: tuple[str, ...] = ("memories",)
    value_key: str = "content"
    index: dict[str, Any] | None = None  # a LangGraph index config (embed callable, dims…)


def open_memory_store(target: str | Target,
                      namespace: tuple[str, ...] = ("memories",)) -> MemoryStore:
    """`KIND:WHERE`: `jsonl:PATH`, `langgraph-sqlite:PATH` or `langgraph-postgres:CONNINFO`
    (see the modules), or a kind a plugin adds (`APPLIERS`). The path must exist and be the
    agent's store: nothing is created."""
    if isinstance(target, str):
        target = Target(target, namespace)
    kind, _, where = target.spec.partition(":")
    if not where:
        raise ConfigError(f"--to {target.spec!r}: expected KIND:WHERE, KIND one of "
                          f"{', '.join(APPLIERS.names())}")
    return APPLIERS.create(kind, where, target)


def _open_jsonl(where: str, target: Target) -> MemoryStore:
    from provrepair.repair.appliers.jsonl import JsonlMemory

    if target.index is not None:
        raise ConfigError("--index goes with a LangGraph store (a JSONL file has no index)")
    return JsonlMemory(where, value_key=target.value_key)


def _open_langgraph_sqlite(where: str, target: Target) -> MemoryStore:
    from provrepair.repair.appliers.langgraph import sqlite_store

    return sqlite_store(where, target.namespace, target.value_key, target.index)


def _open_langgraph_postgres(where: str, target: Target) -> MemoryStore:
    from provrepair.repair.appliers.langgraph import postgres_store

    return postgres_store(where, target.namespace, target.value_key, target.index)


# `--to KIND:WHERE` → factory(where, target); plugins add kinds through the
# "provrepair.appliers" entry points (provenance/registry.py)
APPLIERS: Registry[MemoryStore] = Registry("applier", {
    "jsonl": _open_jsonl,
    "langgraph-sqlite": _open_langgraph_sqlite,
    "langgraph-postgres": _open_langgraph_postgres,
})

