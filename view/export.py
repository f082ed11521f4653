"""Copy one task from the configured store to another (`provrepair export`), e.g. from the
embedded FalkorDB to a Neo4j a person explores with Neo4j Browser.

What travels: the task record, every node (recorded and repair-written) with all its
properties, every edge (REPLAYS included), every repair run with its disposition marks, and
the evaluation record of the vault. The unit of work, each statement idempotent (MERGE on
uids and keys, in batches), so re-running an export converges to the same copy:

  1. the target holds another recorded version of the task (another content hash): delete it
  2. merge_task with complete = false      (an interrupted export reads as incomplete)
  3. nodes, edges, runs, marks, evaluation (batches of provenance.store.base.BATCH_ROWS rows)
  4. prune the target's nodes and runs the source no longer has (a rolled-back repair's)
  5. label_latest_run                      (the Neo4j Browser's disposition labels)
  6. merge_task with the source's completeness
Lock properties of the task record are not copied. Export a task while no repair runs on it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from provrepair.provenance.agent_records import CLOCK, ORDER_ONLY, link_agent_records
from provrepair.provenance.keys import eval_key, task_key
from provrepair.provenance.readback import get_task_props
from provrepair.provenance.rows import group_node_rows
from provrepair.provenance.state.calls import kept_call_params
from provrepair.provenance.state.runs import run_params
from provrepair.provenance.store.base import GraphStore, batched
from provrepair.provenance.vocab import RepairEdge

# Lock properties a task record carried before the lock moved to its own :TaskLock node
# (provenance/lock.py); a store written then may still hold them. Never copied.
NOT_COPIED = frozenset({"repair_lock", "repair_lock_pid", "repair_lock_host", "repair_lock_at",
                        "lock_probe"})


@dataclass
class Snapshot:
    task_id: str
    key: str
    task: dict[str, Any]
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    runs: list[dict[str, Any]]
    marks: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # run_key → rows
    evaluation: dict[str, Any] | None = None


@dataclass
class ExportResult:
    task_id: str
    target: dict[str, Any]
    nodes: int
    edges: int
    runs: int
    marks: int
    replaced_version: bool
    pruned_nodes: int
    pruned_runs: int
    labelled_run: str | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def read_task(store: GraphStore, task_id: str) -> Snapshot:
    """Everything `export` copies, read from the source (raises TaskNotFound)."""
    task = {k: v for k, v in get_task_props(store, task_id).items() if k not in NOT_COPIED}
    key = task_key(task_id)
    nodes = [row["props"] for row in store.run("list_task_nodes", {"task_key": key})]
    uid = {n["id"]: n["uid"] for n in nodes}
    edges = [{**row, "src": uid[row["src"]], "dst": uid[row["dst"]]}
             for row in store.run("list_task_edges", {"task_key": key})]
    runs = [row["props"] for row in store.run("list_runs", {"task_key": key})]
    snap = Snapshot(task_id, key, task, nodes, edges, runs)
    for run in runs:
        rows = store.run("list_run_marks", {"run_key": run["run_key"]})
        snap.marks[run["run_key"]] = [{"uid": uid[r["id"]], "mark": r["mark"]} for r in rows]
    if task.get("content_hash"):
        found = store.run("get_evaluation", {"eval_key": eval_key(task_id, task["content_hash"])})
        snap.evaluation = found[0] if found else None
    return snap


def export_task(source: GraphStore, target: GraphStore, task_id: str) -> ExportResult:
    snap = read_task(source, task_id)
    replaced = _clear_other_version(target, snap)
    target.run("merge_task", {"task_key": snap.key, "props": {**snap.task, "complete": False}})
    _write_nodes(target, snap)
    _write_edges(target, snap)
    recorded = [n for n in snap.nodes if n.get("origin_run") is None]
    timed = json.loads(snap.task.get("world_json") or "{}").get(CLOCK) != ORDER_ONLY
    link_agent_records(target, snap.key, snap.task.get("memory_namespace"),  # a shared memory's
                       [n for n in recorded if n["kind"] == "memory"],   # records (issue 37)
                       [n["ts"] for n in recorded if n["kind"] != "memory" and timed])
    _write_runs(target, snap)
    _write_evaluation(target, snap)
    pruned_nodes, pruned_runs = _prune(target, snap)
    labelled = target.run("label_latest_run", {"task_id": snap.task_id,
                                               **run_params("finished_statuses")})
    target.run("merge_task", {"task_key": snap.key,
                              "props": {"complete": snap.task.get("complete", True)}})
    return ExportResult(
        task_id=snap.task_id, target=target.describe(), nodes=len(snap.nodes),
        edges=len(snap.edges), runs=len(snap.runs),
        marks=sum(len(rows) for rows in snap.marks.values()), replaced_version=replaced,
        pruned_nodes=pruned_nodes, pruned_runs=pruned_runs,
        labelled_run=labelled[0]["run_id"] if labelled else None)


def _clear_other_version(target: GraphStore, snap: Snapshot) -> bool:
    found = target.run("get_task", {"task_key": snap.key})
    if not found or found[0]["props"].get("content_hash") == snap.task.get("content_hash"):
        return False
    target.run("delete_task", {"task_key": snap.key, **kept_call_params()})
    return True


def _write_nodes(target: GraphStore, snap: Snapshot) -> None:
    rows = [{"uid": n["uid"], "props": n} for n in snap.nodes]
    for query, group in group_node_rows(rows).items():
        for batch in batched(group):
            target.run(query, {"rows": batch})


def _write_edges(target: GraphStore, snap: Snapshot) -> None:
    replays = [{"src": e["src"], "dst": e["dst"]} for e in snap.edges
               if e["label"] == RepairEdge.REPLAYS]
    others = [e for e in snap.edges if e["label"] != RepairEdge.REPLAYS]
    for batch in batched(others):
        target.run("merge_edges", {"rows": batch})
    for batch in batched(replays):
        target.run("merge_replays_edges", {"rows": batch})


def _write_runs(target: GraphStore, snap: Snapshot) -> None:
    for run in snap.runs:
        target.run("merge_repair_run", {"run_key": run["run_key"], "task_key": snap.key,
                                        "props": run})
        for batch in batched(snap.marks[run["run_key"]]):
            target.run("merge_run_marks", {"run_key": run["run_key"], "rows": batch})


def _write_evaluation(target: GraphStore, snap: Snapshot) -> None:
    if snap.evaluation is None:
        return
    keep = eval_key(snap.task_id, snap.task["content_hash"])
    target.run("merge_evaluation", {"eval_key": keep, "task_key": snap.key,
                                    "props": snap.evaluation})
    target.run("prune_evaluations", {"task_key": snap.key, "keep_key": keep})


def _prune(target: GraphStore, snap: Snapshot) -> tuple[int, int]:
    keep_nodes = {n["uid"] for n in snap.nodes}
    there = {row["uid"] for row in target.run("list_task_uids", {"task_key": snap.key})}
    gone_nodes = sorted(there - keep_nodes)
    for batch in batched(gone_nodes):
        target.run("delete_nodes", {"uids": batch})
    keep_runs = {run["run_key"] for run in snap.runs}
    runs_there = {row["props"]["run_key"] for row in target.run("list_runs",
                                                                {"task_key": snap.key})}
    gone_runs = sorted(runs_there - keep_runs)
    if gone_runs:
        target.run("delete_runs", {"run_keys": gone_runs})
    return len(gone_nodes), len(gone_runs)
