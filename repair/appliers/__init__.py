"""Carry a memory patch (repair/patch.py) to the store an agent reads.

An applier is five operations on one memory store, by the agent's record id (`MemoryStore`
below), plus a transaction. Every store the agent may use gets a small module: `jsonl.py` (a
plain JSONL memory file), `langgraph.py` (LangGraph's `BaseStore`: InMemoryStore,
SqliteStore, PostgresStore and their async forms), `mem0.py` (mem0's `Memory`: it assigns its
own ids and has no transactions; the module says how it is carried anyway). For another store,
implement the protocol; quarantine is a move to a namespace or collection the agent does not
search.

`apply_patch`:
1. checks the namespace: a patch of a task whose memory namespace is not the target's (another
   user's memory) is `TargetMismatch` unless allowed (`allow_other_namespace`,
   `apply --allow-other-namespace`); then, inside one transaction of the store (a SQL
   transaction, or a lock):
2. reads every record the patch names (and the records it keeps);
3. checks the target: a store holding none of the patch's records *with the content the task
   recorded* (in its expected or its patched state) is not the agent's memory (another
   namespace, another value key, another database, another user's store reusing the ids):
   `TargetMismatch`, nothing written;
4. checks every operation (optimistic check: a record must still hold the content the repair
   saw, or already be in its patched state): any other state is `PatchConflict`, nothing
   written;
5. applies the pending operations in the patch's order; already-applied ones are skipped, so
   applying twice is a no-op. A change by someone else between 2 and 5 cannot happen (the
   transaction) or makes the commit fail (a conflict, never an overwrite).
"""

from __future__ import annotations

import importlib
import sys
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass, field
from typing import Any, Protocol

from provrepair.provenance.checkpoints import checkpoint
from provrepair.provenance.errors import ConfigError, PatchConflict, TargetMismatch
from provrepair.provenance.registry import Registry
from provrepair.repair.patch import KeptRecord, MemoryPatch


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

    # optional: `memory_namespace: str | None`, the agent memory the store is (checked
    # against the patch's; a store without it is not checked)


Snapshot = dict[str, tuple[str | None, str | None]]  # agent id → (active, quarantined) content


@dataclass
class ApplyResult:
    applied: list[str] = field(default_factory=list)   # "op memory_id"
    already: list[str] = field(default_factory=list)   # operations found in effect


def apply_patch(patch: MemoryPatch, store: MemoryStore, *,
                allow_other_namespace: bool = False) -> ApplyResult:
    """Apply `patch` to `store` atomically (see the module docstring). A store that cannot be
    read or written (a read-only file, a database error) is `TargetMismatch`, one line."""
    check_namespace(patch, store, allow_other_namespace)
    try:
        with store.transaction():
            snapshot = {i: (store.get(i), store.quarantined(i)) for i in read_ids(patch)}
            pending = plan_apply(patch, snapshot)
            checkpoint("apply_checked")  # the race tests hold an applier here
            for op in pending:
                write(op, store)
    except _store_errors() as exc:
        raise store_error(exc) from exc
    return result_of(patch, pending)


def check_namespace(patch: MemoryPatch, store: Any, allow_other_namespace: bool) -> None:
    """A patch of a task that read and wrote another agent memory than the target is: refused
    unless allowed (README, "Carrying the repaired memory back")."""
    theirs = getattr(store, "memory_namespace", None)
    if patch.memory_namespace is None or theirs is None or allow_other_namespace \
            or theirs == patch.memory_namespace:
        return
    raise TargetMismatch(
        f"the patch is of task {patch.task_id!r}, whose memory is namespace "
        f"{patch.memory_namespace!r}; the target is {theirs!r}: another agent memory (another "
        "user's?); nothing written (--allow-other-namespace, or allow_other_namespace=True, "
        "applies it anyway)")


def store_error(exc: Exception) -> TargetMismatch:
    """A store driver's error as the one-line error the user sees."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return TargetMismatch(f"the memory store cannot take the patch ({type(exc).__name__}: "
                          f"{reason}); nothing written")


def _store_errors() -> tuple[type[Exception], ...]:
    """The errors of the stores' own drivers (a library error never reaches the user raw):
    of the libraries a store loaded (importing mem0 only to name its error would take a
    second and start its telemetry)."""
    import sqlite3

    errors: tuple[type[Exception], ...] = (OSError, sqlite3.Error)
    for module, name in (("pysqlite3.dbapi2", "Error"), ("psycopg", "Error"),
                         ("mem0.exceptions", "MemoryError"),
                         ("qdrant_client.http.exceptions", "ResponseHandlingException"),
                         ("qdrant_client.http.exceptions", "UnexpectedResponse"),
                         ("openai", "OpenAIError")):  # mem0's embedder, as configured
        if module.split(".")[0] in sys.modules:
            with suppress(ImportError):
                errors = (*errors, getattr(importlib.import_module(module), name))
    return errors


async def apply_patch_async(patch: MemoryPatch, store: Any, *,
                            allow_other_namespace: bool = False) -> ApplyResult:
    """`apply_patch` for an async store (`AsyncLangGraphMemory`): the same checks, order and
    errors."""
    check_namespace(patch, store, allow_other_namespace)
    try:
        async with store.transaction():
            snapshot = {i: (await store.get(i), await store.quarantined(i))
                        for i in read_ids(patch)}
            pending = plan_apply(patch, snapshot)
            for op in pending:
                await _write_async(op, store)
    except _store_errors() as exc:
        raise store_error(exc) from exc
    return result_of(patch, pending)


def read_ids(patch: MemoryPatch) -> list[str]:
    return [*(op.memory_id for op in patch.operations), *patch.kept_ids]


def plan_apply(patch: MemoryPatch, snapshot: Snapshot) -> list[Any]:
    """The operations still to apply, after the target and conflict checks (pure)."""
    states = [(op, _state(op, *snapshot[op.memory_id])) for op in patch.operations]
    records = [*patch.operations, *patch.kept]
    if records and not any(_holds(r, *snapshot[r.memory_id]) for r in records):
        other = next((r.memory_id for r in records
                      if any(v is not None for v in snapshot[r.memory_id])), None)
        example = (f"{other!r} is there with other content: another user's or task's memory?"
                   if other is not None else f"e.g. {records[0].memory_id!r}")
        raise TargetMismatch(
            f"the target holds none of the {len(records)} record(s) of task {patch.task_id!r} "
            f"with the content the task recorded ({example}): not the agent's memory (check "
            "the path, --namespace and --value-key); nothing written")
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


def _holds(record: Any, active: str | None, hidden: str | None) -> bool:
    """The store holds this record of the patch with the content the task recorded (or the
    patch writes): what tells the agent's memory from another one reusing its ids."""
    if isinstance(record, KeptRecord) or record.op == "add":
        return bool(active == record.content)
    if record.op == "put":
        return active in (record.expected_content, record.content)
    return bool(record.expected_content in (active, hidden))


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


def split_namespace(text: str) -> tuple[str, ...]:
    """`--namespace a/b` → ("a", "b"): one line naming the option for "" or an empty part
    ("a//b", "a/"), which no store has (a store checks its own rules beyond that)."""
    parts = tuple(text.split("/"))
    if not text or not all(parts):
        where = "is empty" if not text else f"has an empty part (part {parts.index('') + 1})"
        raise ConfigError(f"--namespace {text!r} {where}: give the agent memory's namespace, "
                          "parts separated by '/', each non-empty (e.g. memories/user-42)")
    return parts


@dataclass(frozen=True)
class Target:
    """Where the agent's memory is: `--to KIND:PATH` with its namespace, value key, index."""

    spec: str
    namespace: tuple[str, ...] = ("memories",)
    value_key: str = "content"
    index: dict[str, Any] | None = None  # a LangGraph index config (embed callable, dims…)


def open_memory_store(target: str | Target,
                      namespace: tuple[str, ...] = ("memories",)) -> MemoryStore:
    """`KIND:WHERE`: `jsonl:PATH`, `langgraph-sqlite:PATH`, `langgraph-postgres:CONNINFO` or
    `mem0:CONFIG` (see the modules), or a kind a plugin adds (`APPLIERS`). The path must exist
    and be the agent's store: nothing is created."""
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


def _open_mem0(where: str, target: Target) -> MemoryStore:
    from provrepair.repair.appliers.mem0 import mem0_store

    if target.index is not None:
        raise ConfigError("--index goes with a LangGraph store (mem0's embedder is in its "
                          "config)")
    return mem0_store(where, "/".join(target.namespace))


# `--to KIND:WHERE` → factory(where, target); plugins add kinds through the
# "provrepair.appliers" entry points (provenance/registry.py)
APPLIERS: Registry[MemoryStore] = Registry("applier", {
    "jsonl": _open_jsonl,
    "langgraph-sqlite": _open_langgraph_sqlite,
    "langgraph-postgres": _open_langgraph_postgres,
    "mem0": _open_mem0,
})

