"""The live recorder: what an agent runtime calls as it runs.

    with Recorder(store, "task-42", domain="shopping") as rec:
        rec.user_input(input_id="u1", turn=1, content="...", timestamp=1)
        rec.memory(memory_id="m1", ...)
        rec.step(step_id="s1", step_type="claim", ...)
        rec.faults(["m1"])            # when a detector names faulty memories
    # leaving the block validates what was pending and marks the task complete

Each event is validated at once against the rules of docs/case-format.md (the same
`CaseValidator` the file ingest uses); a bad event raises `CaseError` and is not written.
References to records not yet seen (`next_step_ids`, a memory produced by this step) wait
and must resolve by `close()`. Nodes and their derived edges are written in small batches
(`batch_size` events, or on `flush()`); an edge is written once both its ends are stored.

Crash bound: a crash loses at most the events recorded since the last flush; everything
flushed is in the store, and the task reads as incomplete until `close()` succeeds. A crash
inside a flush may leave part of a batch (nodes are written one statement per type) and nodes
without their edges: resuming keeps, per kind, the stored records that form a prefix of the
event order (the rest of the half-written batch is removed, to be recorded again), and
re-derives every kept record's edges (MERGE), so the resumed task equals an uninterrupted
recording.
Recording again into an incomplete task resumes it: events already stored are skipped when
identical (so replaying the same event stream after a crash converges) and refused if not.
Re-recording a memory id updates only its lifecycle fields (status, last_modified_by,
last_modified_at, trust_score), as an agent's store does when a later step retires it.
Steps of a turn must arrive in timestamp order (the first one receives INITIATE).
Beside the agent, a recording wrapper of its memory store (provrepair.integrations) records
the store's operations into the same task: it allocates ids against `taken_ids()`, stamps
them after `clock` (the latest timestamp recorded) and names the task's agent memory
(`use_memory_namespace`).
A recording holds the task's write lock (provenance/lock.py, purpose "record") from its
construction to `close()` (or `release()`), checked and refreshed at every flush: a `delete`
or `ingest --replace` of the task meanwhile is refused with TaskConflict naming the recorder,
and a recorder that died (kill -9) is taken over by the next one on this host.
"""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from typing import Any

from provrepair.provenance.agent_records import link_node_rows, link_stored_task
from provrepair.provenance.edges import Edge, NodeKind, dedupe, memory_edges, step_edges
from provrepair.provenance.errors import CaseError, ProvrepairError, TaskConflict
from provrepair.provenance.ingest import content_hash, evaluation_props
from provrepair.provenance.keys import eval_key, task_key
from provrepair.provenance.lock import acquire, new_owner_id, release
from provrepair.provenance.models import Case, ExecutionStep, MemoryRecord, ToolSpec, UserInput
from provrepair.provenance.parsing import parse_event
from provrepair.provenance.rows import (
    dumps,
    edge_row,
    input_row,
    memory_row,
    node_type,
    record_from_props,
    step_row,
)
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import CaseValidator, check_lifecycle_change
from provrepair.provenance.vocab import EdgeLabel

Record = UserInput | MemoryRecord | ExecutionStep
ROW_OF = {NodeKind.USER_INPUT: input_row, NodeKind.MEMORY: memory_row, NodeKind.STEP: step_row}


def record_id(record: Record) -> str:
    if isinstance(record, UserInput):
        return record.input_id
    return record.memory_id if isinstance(record, MemoryRecord) else record.step_id


def edge_targets(record: Record) -> list[str]:
    """Ids that must be known before this record's edges can be derived."""
    if isinstance(record, ExecutionStep):
        return [*record.used_ids, *record.prev_step_ids, *record.next_step_ids,
                *record.generated_memory_ids, *record.invalidated_memory_ids]
    if isinstance(record, MemoryRecord):
        return [*record.derived_from, *([record.supersedes] if record.supersedes else [])]
    return []


class Recorder:
    """Record one task's provenance live; see the module docstring."""

    def __init__(self, store: GraphStore, task_id: str, *, domain: str = "",
                 tools: list[ToolSpec] | None = None, world: dict[str, Any] | None = None,
                 batch_size: int = 64, memory_namespace: str | None = None):
        """`memory_namespace`: the agent memory the run uses, shared with the other
        conversations that name it (the case format's `memory_namespace`)."""
        if memory_namespace == "":
            raise CaseError(task_id, "memory_namespace", None, "empty (name the namespace, "
                            "or give None: the task is its own scope)")
        self.store, self.task_id, self.batch_size = store, task_id, batch_size
        store.prepare_for_writes()
        self.key = task_key(task_id)
        self.task: dict[str, Any] = {"task_id": task_id, "domain": domain,
                                     "diagnosed_faults": [], "complete": False,
                                     "tools_json": dumps([t.model_dump() for t in tools or []]),
                                     "world_json": dumps(world or {})}
        if memory_namespace is not None:
            self.task["memory_namespace"] = memory_namespace
        self.validator = CaseValidator(task_id)
        self.records: dict[str, Record] = {}
        self.order: dict[str, list[str]] = defaultdict(list)  # kind → ids in arrival order
        self.rows: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)  # unflushed
        self.edges: list[Edge] = []
        self.blocked: dict[str, list[str]] = defaultdict(list)  # missing id → waiting records
        self.missing: dict[str, int] = {}
        self.inputs_by_turn: dict[int, list[str]] = defaultdict(list)
        self.first_step: dict[int, tuple[int, str]] = {}
        self.clock: int | None = None  # the latest timestamp recorded (None: nothing yet)
        self.task_dirty, self.pending_events = True, 0
        self.owner = new_owner_id("record")
        acquire(store, task_id, self.owner, "record")
        try:
            self._resume()
        except BaseException:
            self.release()
            raise

    # -- events -----------------------------------------------------------------------------

    def user_input(self, record: UserInput | None = None, **fields: Any) -> UserInput:
        result: UserInput = self._record(UserInput, NodeKind.USER_INPUT, record, fields)
        return result

    def memory(self, record: MemoryRecord | None = None, **fields: Any) -> MemoryRecord:
        result: MemoryRecord = self._record(MemoryRecord, NodeKind.MEMORY, record, fields)
        return result

    def step(self, record: ExecutionStep | None = None, **fields: Any) -> ExecutionStep:
        result: ExecutionStep = self._record(ExecutionStep, NodeKind.STEP, record, fields)
        return result

    def faults(self, memory_ids: list[str]) -> None:
        """Set the diagnosed faulty memories (the set F of docs/method.md)."""
        self.validator.add_faults(memory_ids)
        self.task["diagnosed_faults"] = list(dict.fromkeys(memory_ids))
        self.task_dirty = True
        self._count_event()

    def taken_ids(self) -> set[str]:
        """Every id of the task: recorded, or named by a record and still awaited (one id
        space for inputs, memories and steps): what a caller allocating ids of its own
        (provenance/state/memory.py `allocate_id`) must not reuse."""
        return {*self.records, *self.blocked, *(ref.target for ref in self.validator.pending)}

    def use_memory_namespace(self, namespace: str) -> None:
        """Name the agent memory the run uses when the recording did not (a recording
        wrapper learns it from the agent's store, provrepair.integrations): set once, the same
        one again changes nothing, another is refused. Records flushed before are linked to
        it as those flushed after (provenance/agent_records.py)."""
        current = self.task.get("memory_namespace")
        if current == namespace:
            return
        if not namespace:
            raise CaseError(self.task_id, "memory_namespace", None, "empty (name the namespace)")
        if current is not None:
            raise CaseError(self.task_id, "memory_namespace", namespace,
                            f"the recording's agent memory is {current!r}: one task, one namespace")
        self.task["memory_namespace"] = namespace
        self.task_dirty = True
        self.flush()
        link_stored_task(self.store, self.key, namespace)

    def flush(self) -> None:
        """Write buffered nodes, then the edges whose ends are now stored, then the task
        (after checking, and refreshing, that this recording still holds the task lock)."""
        acquire(self.store, self.task_id, self.owner, "record")
        if self.task_dirty:
            self.store.run("merge_task", {"task_key": self.key, "props": self.task})
            self.task_dirty = False
        pending = [row for rows in self.rows.values() for row in rows.values()]
        if pending:  # one statement for every kind (cypher/ingest/merge_nodes.cypher)
            self.store.run("merge_nodes", {"rows": [
                {**row, "type": node_type(row["props"])}
                for row in pending]})
            # a shared memory's records, linked as they are written (provenance/agent_records.py)
            link_node_rows(self.store, self.key, self.task.get("memory_namespace"), pending)
        self.rows.clear()
        if self.edges:
            edge_rows = [edge_row(self.key, e) for e in dedupe(self.edges)]
            self.store.run("merge_edges", {"rows": edge_rows})
            self.edges = []
        self.pending_events = 0

    def close(self) -> None:
        """Check every pending reference, flush, and mark the task complete."""
        self.flush()  # what is valid so far is kept even if a reference never resolved
        self.validator.finish()
        case = self.as_case()
        digest = content_hash(case)
        self.store.run("merge_evaluation", {"eval_key": eval_key(self.task_id, digest),
                                            "task_key": self.key, "props": evaluation_props(case)})
        self.task.update(complete=True, content_hash=digest)
        self.store.run("merge_task", {"task_key": self.key, "props": self.task})
        self.release()

    def release(self) -> None:
        """Give the task lock back (the recording stays incomplete unless closed)."""
        with contextlib.suppress(ProvrepairError):  # a dead store: the lock goes stale
            release(self.store, self.task_id, self.owner)

    def as_case(self) -> Case:
        def records(kind: str) -> list[Any]:
            return [self.records[i] for i in self.order[kind]]
        return Case(format="provrepair.case/1", task_id=self.task_id, domain=self.task["domain"],
                    session=records(NodeKind.USER_INPUT), memory_store=records(NodeKind.MEMORY),
                    trace=records(NodeKind.STEP), diagnosed_faults=self.task["diagnosed_faults"],
                    tools=[ToolSpec.model_validate(t) for t in json.loads(self.task["tools_json"])],
                    world=json.loads(self.task["world_json"]),
                    memory_namespace=self.task.get("memory_namespace"))

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        try:
            if exc_type is None:
                self.close()
            else:
                self.flush()  # keep every valid event; the task stays incomplete
        finally:
            self.release()  # a no-op after close()

    # -- internals --------------------------------------------------------------------------

    def _record(self, model: type[Any], kind: str, record: Any, fields: dict[str, Any]) -> Any:
        if record is None:
            record = parse_event(model, fields, self.task_id, kind)
        rid = record_id(record)
        old = self.records.get(rid)
        if old is not None and old == record:
            return record  # already stored (resumed stream): idempotent
        if _label_restored(old, record):
            self.records[rid] = record  # stored before a crash, its label kept in memory only
            return record
        if old is not None and isinstance(old, MemoryRecord) and isinstance(record, MemoryRecord):
            self._update_memory(old, record)
        else:
            self._admit(kind, record)
        self._count_event()
        return record

    def _tick(self, record: Record) -> None:
        """Advance `clock` to the record's latest timestamp."""
        times = [record.created_at, record.last_modified_at] \
            if isinstance(record, MemoryRecord) else [record.timestamp]
        self.clock = max(times if self.clock is None else [self.clock, *times])

    def _admit(self, kind: str, record: Record) -> None:
        add = {NodeKind.USER_INPUT: self.validator.add_input,
               NodeKind.MEMORY: self.validator.add_memory, NodeKind.STEP: self.validator.add_step}
        if isinstance(record, ExecutionStep):
            self._check_turn_order(record)
        add[kind](record, kind)  # type: ignore[operator]
        rid = record_id(record)
        self.records[rid] = record
        self._tick(record)
        self.order[kind].append(rid)
        self.rows[kind][rid] = ROW_OF[kind](self.key, record, len(self.order[kind]) - 1)  # type: ignore[operator]
        self._link(record)
        for waiting in self.blocked.pop(rid, []):
            self.missing[waiting] -= 1
            if self.missing[waiting] == 0:
                del self.missing[waiting]
                self._emit_edges(self.records[waiting])

    def _update_memory(self, old: MemoryRecord, new: MemoryRecord) -> None:
        check_lifecycle_change(self.validator, old, new)
        self.records[new.memory_id] = new
        self._tick(new)
        position = self.order[NodeKind.MEMORY].index(new.memory_id)
        self.rows[NodeKind.MEMORY][new.memory_id] = memory_row(self.key, new, position)

    def _check_turn_order(self, step: ExecutionStep) -> None:
        first = self.first_step.get(step.turn)
        if first is not None and step.timestamp < first[0]:
            raise CaseError(self.task_id, "step.timestamp", step.step_id,
                            f"earlier than step {first[1]!r}, recorded before it in turn "
                            f"{step.turn}; record a turn's steps in time order")

    def _link(self, record: Record) -> None:
        """Queue INITIATE edges and this record's own edges (or wait for missing ends)."""
        if isinstance(record, UserInput):
            self.inputs_by_turn[record.turn].append(record.input_id)
            if record.turn in self.first_step:
                self.edges.append(Edge(EdgeLabel.INITIATE, record.input_id,
                                       self.first_step[record.turn][1]))
        elif isinstance(record, ExecutionStep) and record.turn not in self.first_step:
            self.first_step[record.turn] = (record.timestamp, record.step_id)
            self.edges.extend(Edge(EdgeLabel.INITIATE, i, record.step_id)
                              for i in self.inputs_by_turn[record.turn])
        missing = {t for t in edge_targets(record) if t not in self.records}
        if not missing:
            self._emit_edges(record)
            return
        rid = record_id(record)
        self.missing[rid] = len(missing)
        for target in missing:
            self.blocked[target].append(rid)

    def _emit_edges(self, record: Record) -> None:
        if isinstance(record, ExecutionStep):
            kinds = self.validator.kinds
            self.edges.extend(step_edges(record, kinds.get))
        elif isinstance(record, MemoryRecord):
            self.edges.extend(memory_edges(record))

    def _count_event(self) -> None:
        self.pending_events += 1
        if self.pending_events >= self.batch_size:
            self.flush()

    def _resume(self) -> None:
        """Continue an incomplete task already in the store; refuse a complete one."""
        rows = self.store.run("get_task", {"task_key": self.key})
        if not rows:
            return
        props = rows[0]["props"]
        if props.get("complete"):
            raise TaskConflict(f"task {self.task_id!r} is already stored and complete; "
                               "record under a new task id or delete it first")
        self.task.update({k: props[k] for k in ("domain", "tools_json", "world_json",
                                                "diagnosed_faults", "memory_namespace")
                          if k in props})
        stored = self.store.run("list_task_nodes", {"task_key": self.key})
        rank = {NodeKind.USER_INPUT: 0, NodeKind.MEMORY: 1, NodeKind.STEP: 2}
        kept, dropped = _stored_prefix(sorted(
            (row["props"] for row in stored), key=lambda p: (rank[p["kind"]], p["position"])))
        if dropped:
            self.store.run("delete_nodes", {"uids": dropped})
        for props in kept:
            self._admit(props["kind"], record_from_props(props))
        self.rows.clear()  # the nodes are stored
        # The edges are derived again and MERGEd (idempotent), never assumed stored: a crash
        # inside a flush can leave a node written without its edges.
        self.flush()


def _label_restored(old: Record | None, new: Record) -> bool:
    """A memory read back on resume has no `fault_type` (an evaluation label, written to
    the vault only at close); the replayed event restores it: the same record."""
    return (isinstance(old, MemoryRecord) and isinstance(new, MemoryRecord)
            and old.fault_type is None and new.fault_type is not None
            and old.model_copy(update={"fault_type": new.fault_type}) == new)


def _stored_prefix(props: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Stored nodes (sorted by kind, then position) → those whose positions run 0, 1, 2…
    within their kind, and the uids of the rest (after a gap a crash left mid-flush)."""
    kept: list[dict[str, Any]] = []
    dropped: list[str] = []
    expected: dict[str, int] = defaultdict(int)
    for p in props:
        if p["position"] == expected[p["kind"]]:
            kept.append(p)
            expected[p["kind"]] += 1
        else:
            dropped.append(p["uid"])
    return kept, dropped

