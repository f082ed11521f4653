"""Read a task back from the store as a case (graph → case JSON), for `provrepair show`.

The planner never calls `read_case(..., with_evaluation=True)`: evaluation data and memory
`fault_type` labels come from the vault, which only this function and the benchmark read.
"""

from __future__ import annotations

import json
from typing import Any

from provrepair.provenance.edges import NodeKind
from provrepair.provenance.errors import TaskNotFound
from provrepair.provenance.keys import eval_key, task_key
from provrepair.provenance.models import Case, Evaluation, ExecutionStep, MemoryRecord, UserInput
from provrepair.provenance.rows import record_from_props, tools_from_props
from provrepair.provenance.state.runs import recorded_status
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.vocab import FaultType


def get_task_props(store: GraphStore, task_id: str) -> dict[str, Any]:
    rows = store.run("get_task", {"task_key": task_key(task_id)})
    if not rows:
        raise TaskNotFound(f"task {task_id!r} is not in the store (see `provrepair tasks`)")
    props: dict[str, Any] = rows[0]["props"]
    return props


def read_case(store: GraphStore, task_id: str, *, with_evaluation: bool = True,
              as_recorded: bool = False) -> Case:
    """The recorded nodes of the task as a case, with their statuses as they stand now
    (as_recorded: as ingested, whatever repairs changed since)."""
    task = get_task_props(store, task_id)
    inputs: list[UserInput] = []
    memories: list[MemoryRecord] = []
    steps: list[ExecutionStep] = []
    for row in store.run("list_task_nodes", {"task_key": task_key(task_id)}):
        if "origin_run" in row["props"]:
            continue  # written by a repair run: not part of the recorded case
        props = row["props"]
        if as_recorded and "status" in props:
            props = {**props, "status": recorded_status(props)}
        record = record_from_props(props)
        kind = row["props"]["kind"]
        targets: dict[str, list[Any]] = {NodeKind.USER_INPUT: inputs, NodeKind.MEMORY: memories,
                                         NodeKind.STEP: steps}
        target = targets[kind]
        target.append(record)
    evaluation = None
    if with_evaluation and task.get("content_hash"):
        evaluation, fault_types = _vault(store, task_id, task["content_hash"])
        memories = [m.model_copy(update={"fault_type": _fault(fault_types.get(m.memory_id))})
                    for m in memories]
    return Case(format="provrepair.case/1", task_id=task["task_id"], domain=task.get("domain", ""),
                session=inputs, memory_store=memories, trace=steps,
                diagnosed_faults=list(task.get("diagnosed_faults", [])),
                tools=tools_from_props(task), world=json.loads(task.get("world_json", "{}")),
                evaluation=evaluation, memory_namespace=task.get("memory_namespace"))


def _fault(value: str | None) -> FaultType | None:
    return FaultType(value) if value is not None else None


def _vault(store: GraphStore, task_id: str, digest: str) -> tuple[Evaluation | None, dict[str, str]]:
    rows = store.run("get_evaluation", {"eval_key": eval_key(task_id, digest)})
    if not rows:
        return None, {}
    raw = json.loads(rows[0]["evaluation_json"])
    evaluation = Evaluation.model_validate(raw) if raw is not None else None
    return evaluation, json.loads(rows[0]["fault_types_json"])
