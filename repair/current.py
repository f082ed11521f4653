"""The task as it stands after its repairs: every memory record the store holds, the ones
repairs wrote included (the case read back leaves those out), with what changed each."""

from __future__ import annotations

from typing import Any

from provrepair.provenance.keys import task_key
from provrepair.provenance.readback import get_task_props, read_case
from provrepair.provenance.rows import record_from_props
from provrepair.provenance.store.base import GraphStore

_REPAIR_PROPS = ("origin_run", "replaces", "status_before", "status_run")


def current_memories(store: GraphStore, task_id: str) -> list[dict[str, Any]]:
    """Records in store order (recorded ones by position, then repair-written ones); nodes of
    a repair that never committed are not part of the task and are left out."""
    get_task_props(store, task_id)  # TaskNotFound, naming the task
    rows = store.run("list_task_nodes", {"task_key": task_key(task_id)})
    memories = [r["props"] for r in rows if r["props"].get("kind") == "memory"
                and (r["props"].get("origin_run") is None or r["props"].get("committed"))]
    memories.sort(key=lambda p: (p.get("origin_run") is not None, p["position"]))
    return [{"memory_id": p["id"], "content": p.get("content", ""), "status": p["status"],
             "supersedes": p.get("supersedes"), "written_by_run": p.get("origin_run"),
             "changed_by": p.get("origin_run") or p.get("status_run")}
            for p in memories]


def current_case(store: GraphStore, task_id: str) -> dict[str, Any]:
    """The task as it stands (the paper's repaired trace T' and store M'): each replayed step
    in the place of the step it replaced, steps a repair added after their predecessor, and
    the memory store with the records repairs wrote. Without a repair: the recorded case."""
    case = read_case(store, task_id).model_dump(mode="json")
    rows = store.run("list_task_nodes", {"task_key": task_key(task_id)})
    written = sorted((r["props"] for r in rows if r["props"].get("origin_run")
                      and r["props"].get("committed")), key=lambda p: p["position"])
    steps = [p for p in written if p["kind"] == "step"]
    replacement = {p["replaces"]: _record(p) for p in steps if p.get("replaces")}
    trace = [replacement.get(s["step_id"], s) for s in case["trace"]]
    for added in (_record(p) for p in steps if not p.get("replaces")):
        after = next((i for i, s in enumerate(trace)
                      if s["step_id"] in added["prev_step_ids"]), len(trace) - 1)
        trace.insert(after + 1, added)
    case["trace"] = trace
    case["memory_store"] += [_record(p) for p in written if p["kind"] == "memory"]
    return case


def _record(props: dict[str, Any]) -> dict[str, Any]:
    clean = {k: v for k, v in props.items() if k not in _REPAIR_PROPS}
    return record_from_props(clean).model_dump(mode="json")

