"""The memory patch: what the repairs of a task changed in the agent's memory, as operations
an applier carries to the store the agent reads (repair/appliers/).

    {"format": "provrepair.memory-patch/2", "task_id": ..., "run_id": ..., "runs": [...],
     "memory_namespace": "memories/user-42",
     "kept": [{"memory_id": "m_001", "content": "..."}, ...],
     "operations": [{"op": "delete", "memory_id": "m_f003", "expected_content": "...", ...},
                    {"op": "put", "memory_id": "m_best", "expected_content": "...",
                     "content": "..."},
                    {"op": "add", "memory_id": "m_n007", "content": "...", ...}]}

Ids are the agent's own (docs/case-format.md, "Agent ids"): a record the agent updated in
place is one id in its store however many versions the graph keeps, so replacing its content
is one `put` of that id, from the content the store holds (`expected_content`) to the new one.

Scope: by default the net change from the state the task was recorded in to the state it is
in now, over every committed run of the stored version (a repair, its `--resume` runs, its
continuations, and the sweeps other tasks' repairs made in it over a shared memory namespace,
repair/scope_sweep.py): one apply at the end is always right. With a run id: that run's
change only (from the graph's audit fields, which keep the last run that changed each record:
a record a later run changed again reads as that later run left it).

Order (defined, so appliers need no judgement): every `delete`, then `quarantine`, `restore`,
`put`, `add`, each group in memory-id order; removals first, so an `add` that replaces a
removed record never meets it. `expected_content` is what the agent's store holds for the
record before the patch: an applier refuses a patch whose records changed since (optimistic
check). `kept` names the active records the patch leaves alone, with their content: with the
expected records, what an applier finds in the agent's store to know it is this task's memory
(ids like `m_001` repeat across users; a record counts only holding the content the task
recorded). `memory_namespace` is the task's (docs/case-format.md): an applier refuses a target
that names another one. Applying twice is a no-op.

Format /1 (kept as bare ids, no namespace) could not tell another user's store holding the
same ids from the agent's: a /1 file is refused with the command that makes a /2 one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from provrepair.provenance.errors import InputError, NotRepaired
from provrepair.provenance.keys import task_key
from provrepair.provenance.readback import get_task_props
from provrepair.provenance.state.runs import changes_memory, visible_node
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.vocab import MemoryStatus
from provrepair.repair.plan.echo import REASON
from provrepair.repair.plan.scope import SAME_RECORD_REASON
from provrepair.repair.runs import list_runs

PATCH_FORMAT: Literal["provrepair.memory-patch/2"] = "provrepair.memory-patch/2"
OLD_FORMATS = ("provrepair.memory-patch/1",)
OP_ORDER = ("delete", "quarantine", "restore", "put", "add")


class _Operation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_id: str = Field(min_length=1, description="the id in the agent's memory store")
    reason: str = ""

    @model_serializer(mode="wrap")
    def _op_first(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        return {"op": data.pop("op"), **data} if isinstance(data, dict) else data


class DeleteOp(_Operation):
    op: Literal["delete"]
    expected_content: str


class QuarantineOp(_Operation):
    op: Literal["quarantine"]
    expected_content: str


class RestoreOp(_Operation):
    op: Literal["restore"]
    expected_content: str = Field(description="the content the record is restored with")


class PutOp(_Operation):
    """An in-place update: the record keeps its id, its content changes."""

    op: Literal["put"]
    expected_content: str
    content: str
    produced_by: str | None = None


class AddOp(_Operation):
    op: Literal["add"]
    content: str
    supersedes: str | None = None   # the record it replaces, if any
    produced_by: str | None = None  # the replayed step that wrote it


PatchOperation = Annotated[DeleteOp | QuarantineOp | RestoreOp | PutOp | AddOp,
                           Field(discriminator="op")]


class KeptRecord(BaseModel):
    """An active record the patch leaves as it is, with the content the agent's store holds."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str = Field(min_length=1, description="the id in the agent's memory store")
    content: str


class MemoryPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["provrepair.memory-patch/2"] = PATCH_FORMAT
    task_id: str
    run_id: str = Field(description="the latest run the patch leads to")
    runs: list[str] = Field(default_factory=list, description="every run the patch covers")
    memory_namespace: str | None = Field(
        default=None, description="the agent memory the task read and wrote (a LangGraph "
        "namespace joined by '/', a mem0 scope); absent: the task named none")
    kept: list[KeptRecord] = Field(default_factory=list,
                                   description="active records the patch leaves as they are")
    operations: list[PatchOperation]

    @property
    def kept_ids(self) -> list[str]:
        return [k.memory_id for k in self.kept]

    @model_validator(mode="after")
    def _one_operation_per_record(self) -> MemoryPatch:
        ids = [*(op.memory_id for op in self.operations), *self.kept_ids]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"more than one operation (or kept and changed) for {twice[0]!r}")
        return self


def memory_patch(store: GraphStore, task_id: str, run_id: str | None = None) -> MemoryPatch:
    """The net change of every committed repair of the task (or of the named run only)."""
    task = get_task_props(store, task_id)  # TaskNotFound, naming the task
    runs = [r for r in list_runs(store, task_id) if changes_memory(r["status"])]
    if run_id is not None:
        runs = [r for r in runs if r["run_id"] == run_id]
        if not runs:
            raise NotRepaired(f"task {task_id!r} has no committed repair run {run_id!r} "
                              "(see `provrepair history`)")
    if not runs:
        raise NotRepaired(f"task {task_id!r} has no committed repair: run "
                          f"`provrepair repair --task {task_id}` first")
    rows = store.run("list_task_nodes", {"task_key": task_key(task_id)})
    nodes = [_Node.of(r["props"], run_id) for r in rows if r["props"].get("kind") == "memory"]
    copies: dict[str, str] = {}  # suspected copies the runs quarantined → their fault
    for run in runs:
        copies.update((run.get("plan") or {}).get("suspected_copies") or {})
    ops, kept = _diff([n for n in nodes if n is not None], copies)
    run_ids = [r["run_id"] for r in sorted(runs, key=lambda r: r.get("created", 0))]
    return MemoryPatch(task_id=task_id, run_id=run_ids[-1], runs=run_ids,
                       memory_namespace=task.get("memory_namespace"), kept=kept, operations=ops)


@dataclass(frozen=True)
class _Node:
    """One memory node: its agent id, content, and status before and after the scope."""

    agent_id: str
    content: str
    before: str | None  # None: not in the store then (written by a run of the scope)
    after: str
    props: dict[str, Any]

    @staticmethod
    def of(props: dict[str, Any], run_id: str | None) -> _Node | None:
        origin, status = props.get("origin_run"), props["status"]
        if not visible_node(props):
            return None  # a repair that never committed is not part of the task
        if run_id is None:  # the whole version: from the recorded state
            # status_recorded: kept by the first run that changed the record; a graph
            # repaired before it existed has the last changing run's status_before
            recorded = props.get("status_recorded") or (
                props.get("status_before") if props.get("status_run") else status)
            before = None if origin is not None else recorded
        elif origin == run_id:
            before = None
        elif props.get("status_run") == run_id:
            before = props.get("status_before")
        else:
            before = status
        return _Node(props.get("record_id") or props["id"], props.get("content", ""),
                     before, status, props)


def _diff(nodes: list[_Node], copies: dict[str, str]) -> tuple[list[Any], list[KeptRecord]]:
    """Operations turning each agent id's record from its state before into its state after,
    and the records left active and unchanged (with their content)."""
    by_agent: dict[str, list[_Node]] = {}
    for node in nodes:
        by_agent.setdefault(node.agent_id, []).append(node)
    ops: list[Any] = []
    kept: list[KeptRecord] = []
    for agent_id, versions in by_agent.items():
        op = _operation(agent_id, versions, copies)
        same = next((v for v in versions if v.before == v.after == MemoryStatus.ACTIVE), None)
        if op is not None:
            ops.append(op)
        elif same is not None:
            kept.append(KeptRecord(memory_id=agent_id, content=same.content))
    ops.sort(key=lambda o: (OP_ORDER.index(o.op), o.memory_id))
    return ops, sorted(kept, key=lambda k: k.memory_id)


def _active(versions: Iterable[_Node], when: str) -> _Node | None:
    return next((v for v in versions if getattr(v, when) == MemoryStatus.ACTIVE), None)


def _operation(agent_id: str, versions: list[_Node], copies: dict[str, str]) -> Any:
    was, now = _active(versions, "before"), _active(versions, "after")
    if was is not None and now is not None:
        if now.content == was.content:
            return None
        return PutOp(op="put", memory_id=agent_id, expected_content=was.content,
                     content=now.content, produced_by=now.props.get("last_modified_by"),
                     reason=_why_new(now))
    if now is not None:
        if now.before is not None:  # a recorded record made active again
            return RestoreOp(op="restore", memory_id=agent_id, expected_content=now.content,
                             reason=f"{now.before} before; restored by a repair")
        return AddOp(op="add", memory_id=agent_id, content=now.content,
                     supersedes=now.props.get("supersedes") or now.props.get("replaces"),
                     produced_by=now.props.get("last_modified_by"), reason=_why_new(now))
    if was is not None:
        if was.after == MemoryStatus.QUARANTINED:
            copied = copies.get(was.props["id"])
            why = (REASON.format(fault=copied) if copied is not None
                   else "affected by a fault, without independent support")
            return QuarantineOp(op="quarantine", memory_id=agent_id,
                                expected_content=was.content, reason=why)
        shared = copies.get(was.props["id"])  # a sweep's: the fault of another task
        why = ("replaced by the replay" if was.after != MemoryStatus.DELETED
               else "a diagnosed fault" if shared is None
               else SAME_RECORD_REASON.format(fault=shared))
        return DeleteOp(op="delete", memory_id=agent_id, expected_content=was.content,
                        reason=why)
    # neither active before nor after: a hidden record (superseded, quarantined) now removed
    gone = next((v for v in versions if v.before not in (None, v.after)
                 and v.after in (MemoryStatus.DELETED, MemoryStatus.SUPERSEDED)), None)
    if gone is not None:
        return DeleteOp(op="delete", memory_id=agent_id, expected_content=gone.content,
                        reason=f"{gone.before} before; {gone.after} by a repair")
    return None


def _why_new(node: _Node) -> str:
    run = node.props.get("origin_run")
    return f"regenerated by run {run}" if run else "restored by a repair"


def load_patch(path: str | Path) -> MemoryPatch:
    """A saved patch (`provrepair patch --task T > FILE`), checked against the schema."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"--patch {path}: cannot read ({exc.strerror or exc})") from exc
    return parse_patch(text, str(path))


def parse_patch(text: str, where: str = "patch") -> MemoryPatch:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not JSON ({exc.msg}, line {exc.lineno})") from exc
    if isinstance(data, dict) and data.get("format") in OLD_FORMATS:
        raise InputError(f"{where}: a {data['format']} patch (an earlier provrepair's: it "
                         "cannot check the target by content); make it again with "
                         f"`provrepair patch --task {data.get('task_id', 'ID')}`")
    try:
        return MemoryPatch.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(p) for p in first["loc"])
        raise InputError(f"{where}: not a memory patch ({PATCH_FORMAT}): {at}: "
                         f"{first['msg']} ({exc.error_count()} error(s))") from exc


def patch_json_schema() -> dict[str, Any]:
    """JSON Schema of the patch: every object closed (additionalProperties false), each
    operation with the fields its op requires."""
    schema: dict[str, Any] = json.loads(json.dumps(MemoryPatch.model_json_schema()))
    return schema
