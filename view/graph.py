"""A task's graph under one run, as plain data for the page (JSON-able, no engine objects).

"before" is the recorded graph: every node no repair wrote, coloured by the run's
dispositions, with the memory statuses the run started from. "after" adds what the run's
repair committed (replayed steps, regenerated memories, REPLAYS links) and the statuses it
left: any committed repair (repaired, partial, needs_human: provenance/state/runs.py), not a
plan. Nodes of other runs and uncommitted nodes of crashed runs are not drawn.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from provrepair.provenance.errors import TaskNotFound
from provrepair.provenance.keys import task_key
from provrepair.provenance.readback import get_task_props
from provrepair.provenance.state.memory import OUT_OF_RETRIEVAL
from provrepair.provenance.state.runs import is_committed_repair, is_finished, visible_node
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.vocab import RepairEdge, RunMark
from provrepair.repair.plan.model import RepairPlan
from provrepair.repair.runs import list_runs, plan_marks
from provrepair.view.layout import place
from provrepair.view.palette import MARK_DISPOSITION, page_palette, primary
from provrepair.view.why import new_node_reason, reasons

CONTENT_LIMIT = 2000
TIMESTAMPS = ("timestamp", "created_at", "last_modified_at")
DETAILS = ("source", "tool_name", "fact_key", "fact_value", "entity_id", "trust_score")

Node = dict[str, Any]


def choose_run(store: GraphStore, task_id: str, run_id: str | None) -> dict[str, Any] | None:
    """The named run, else the latest committed repair (a later `plan` does not hide it), else
    the latest finished run (a plan); None when the task has no finished run."""
    runs = list_runs(store, task_id)
    if run_id is None:
        repairs = [r for r in runs if is_committed_repair(r.get("status"))]
        finished = [r for r in runs if is_finished(r.get("status"))]
        chosen = repairs or finished
        return chosen[-1] if chosen else None
    for run in runs:
        if run["run_id"] == run_id:
            return run
    raise TaskNotFound(f"task {task_id!r} has no run {run_id!r} "
                       f"(see `provrepair history --task {task_id}`)")


def view_data(store: GraphStore, task_id: str, run_id: str | None = None) -> dict[str, Any]:
    task = get_task_props(store, task_id)
    run = choose_run(store, task_id, run_id)
    key = task_key(task_id)
    nodes = _nodes([row["props"] for row in store.run("list_task_nodes", {"task_key": key})],
                   run)
    phase = {n["id"]: n["phase"] for n in nodes}
    edges = list(_edges(store.run("list_task_edges", {"task_key": key}), phase))
    place(nodes, edges)
    return {"task": {"task_id": task["task_id"], "domain": task.get("domain", ""),
                     "diagnosed_faults": task.get("diagnosed_faults", [])},
            "run": _run_summary(run), "palette": page_palette(), "nodes": nodes,
            "edges": edges, "out_of_retrieval": sorted(s.value for s in OUT_OF_RETRIEVAL)}


def _run_summary(run: dict[str, Any] | None) -> dict[str, Any] | None:
    if run is None:
        return None
    return {"run_id": run["run_id"], "status": run.get("status"), "method": run.get("method"),
            "created": run.get("created"), "answer": run.get("answer"),
            "repaired": is_committed_repair(run.get("status"))}


def _marks(run: dict[str, Any] | None) -> tuple[dict[str, set[RunMark]], dict[str, list[str]]]:
    """Node id → its run marks; seed step id → the faults it is the seed of."""
    marks: dict[str, set[RunMark]] = defaultdict(set)
    seed_of: dict[str, list[str]] = defaultdict(list)
    if run is None or not run.get("plan"):
        return marks, seed_of
    plan = RepairPlan.model_validate(run["plan"])
    for mark, ids in plan_marks(plan).items():
        for node_id in ids:
            marks[node_id].add(mark)
    for fault, seed in plan.seeds.items():
        seed_of[seed].append(fault)
    return marks, seed_of


def _nodes(rows: list[dict[str, Any]], run: dict[str, Any] | None) -> list[Node]:
    marks, seed_of = _marks(run)
    run_id = run["run_id"] if run else None
    repaired = bool(run and is_committed_repair(run.get("status")))
    nodes = []
    for props in rows:
        if props.get("origin_run") is None:
            nodes.append(_recorded(props, marks.get(props["id"], set()), seed_of, run_id))
        elif repaired and run_id is not None and visible_node(props, run_id):
            nodes.append(_written(props))
    replaced = {n["replaces"] for n in nodes if n["phase"] == "after"}
    for n in nodes:
        n["replaced"] = n["id"] in replaced
    return nodes


def _recorded(props: dict[str, Any], marks: set[RunMark], seed_of: dict[str, list[str]],
              run_id: str | None) -> Node:
    node = _common(props, "both")
    dispositions = {MARK_DISPOSITION[m] for m in marks if m in MARK_DISPOSITION}
    node["disp"] = primary(dispositions) or props["kind"]
    node["marks"] = sorted(m.value for m in marks)
    node["why"] = reasons(props, marks, seed_of) or [
        f"not touched by run {run_id}" if run_id else "no repair run recorded for this task"]
    audited = run_id is not None and props.get("status_run") == run_id
    node["status_before"] = props.get("status_before") if audited else props.get("status")
    node["status_after"] = props.get("status")
    return node


def _written(props: dict[str, Any]) -> Node:
    node = _common(props, "after")
    node.update(disp="regenerated", marks=[], why=new_node_reason(props), status_before=None,
                status_after=props.get("status"))
    return node


def _common(props: dict[str, Any], phase: str) -> Node:
    content = str(props.get("content", ""))
    return {
        "id": props["id"], "kind": props["kind"], "step_type": props.get("step_type"),
        "turn": props.get("turn"), "position": props.get("position"), "ts": props.get("ts"),
        "timestamps": {k: props[k] for k in TIMESTAMPS if k in props},
        "details": {k: props[k] for k in DETAILS if props.get(k) is not None},
        "content": content[:CONTENT_LIMIT], "content_length": len(content), "phase": phase,
        "replaces": props.get("replaces"), "origin_run": props.get("origin_run"),
    }


def _edges(rows: Iterable[dict[str, Any]], phase: dict[str, str]) -> Iterable[Node]:
    for row in rows:
        src, dst = row["src"], row["dst"]
        if src not in phase or dst not in phase:
            continue
        after = row["label"] == RepairEdge.REPLAYS or "after" in (phase[src], phase[dst])
        yield {"src": src, "dst": dst, "label": row["label"], "sufficient": row["sufficient"],
               "phase": "after" if after else "both"}
