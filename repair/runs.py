"""Repair runs in the graph: a `:RepairRun` node per plan or repair, with its dispositions.

Write unit (FalkorDB has only single-statement atomicity): the run node with status
'writing', then the mark batches (idempotent MERGEs), then the final status
(provenance/state/runs.py: begin_props, commit_props). A run interrupted in between stays
'writing', unfinished, and is never read as a plan or a repair.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from provrepair.provenance.keys import staging_key, task_key
from provrepair.provenance.lock import new_owner_id, task_lock
from provrepair.provenance.state.calls import kept_call_params
from provrepair.provenance.state.runs import RunStatus, begin_props, commit_props, run_params
from provrepair.provenance.store.base import GraphStore, batched
from provrepair.provenance.vocab import RunMark
from provrepair.repair.plan.graph import GraphView
from provrepair.repair.plan.model import RepairPlan


def new_run_id() -> str:
    return time.strftime("run-%Y%m%dT%H%M%SZ-", time.gmtime()) + secrets.token_hex(3)


def run_key(task_id: str, run_id: str) -> str:
    return f"{task_key(task_id)}/{run_id}"


def plan_marks(plan: RepairPlan) -> dict[RunMark, list[str]]:
    """Node ids per disposition mark."""
    return {
        RunMark.FAULTY: plan.delete_memory_ids, RunMark.SEED: sorted(set(plan.seeds.values())),
        RunMark.AFFECTED: plan.affected_ids, RunMark.SUPPORTED: plan.supported_ids,
        RunMark.QUARANTINED: plan.quarantine_memory_ids,
        RunMark.INVALIDATED: plan.invalidate_claim_ids,
        RunMark.ANSWER_RELEVANT: plan.answer_relevant_ids, RunMark.REPLAY: plan.replay_step_ids,
        RunMark.PRESERVED: plan.preserve_step_ids, RunMark.SUSPICIOUS: plan.suspicious_step_ids,
    }


def record_plan_run(store: GraphStore, plan: RepairPlan, *, method: str,
                    status: RunStatus | None = RunStatus.PLANNED,
                    extra: dict[str, Any] | None = None,
                    run_id: str | None = None) -> str:
    """Write the plan as a run; returns the run id. Never touches the memory store.
    With status None the run is left 'writing' (a repair commits it later)."""
    run_id = run_id or new_run_id()
    key = run_key(plan.task_id, run_id)
    props = {"run_id": run_id, "task_id": plan.task_id, "method": method,
             "created": int(time.time() * 1000), **begin_props(),
             "plan_json": plan.model_dump_json(), "summary_json": json.dumps(extra or {})}
    store.run("merge_repair_run", {"run_key": key, "task_key": task_key(plan.task_id),
                                   "props": props})
    view = GraphView(store, plan.task_id)
    rows = [{"uid": view.uid(node_id), "mark": mark.value}
            for mark, ids in plan_marks(plan).items() for node_id in ids]
    for batch in batched(rows):
        store.run("merge_run_marks", {"run_key": key, "rows": batch})
    if status is not None:
        store.run("merge_repair_run", {"run_key": key, "task_key": task_key(plan.task_id),
                                       "props": commit_props(status)})
    return run_id


def list_runs(store: GraphStore, task_id: str) -> list[dict[str, Any]]:
    rows = store.run("list_runs", {"task_key": task_key(task_id)})
    return [_public(row["props"]) for row in rows]


def latest_run(store: GraphStore, task_id: str) -> dict[str, Any] | None:
    rows = store.run("get_latest_run", {"task_key": task_key(task_id),
                                        **run_params("finished_statuses")})
    return _public(rows[0]["props"]) if rows else None


def latest_repair(store: GraphStore, task_id: str) -> dict[str, Any] | None:
    """The newest committed repair of the stored task version (plans do not count)."""
    rows = store.run("get_latest_repair", {"task_key": task_key(task_id),
                                           **run_params("repair_statuses")})
    return _public(rows[0]["props"]) if rows else None


def roll_back_unfinished(store: GraphStore, task_id: str) -> list[str]:
    """Undo runs that died before their commit (their pending nodes go, they read aborted)."""
    rows = store.run("list_unfinished_runs", {"task_key": task_key(task_id),
                                              **run_params("writing")})
    for row in rows:
        store.run("rollback_repair_run", {"task_key": task_key(task_id),
                                          "run_key": row["run_key"], "run_id": row["run_id"],
                                          **run_params("writing", "aborted")})
    return [row["run_id"] for row in rows]


def prune_task(store: GraphStore, task_id: str) -> dict[str, Any]:
    """Remove what died half-way, under the task lock: the pending nodes of repairs that never
    committed (their runs read aborted) and a staging copy of an ingest that never swapped."""
    with task_lock(store, task_id, new_owner_id("delete"), "delete"):
        aborted = roll_back_unfinished(store, task_id)
        staged = store.run("delete_task", {"task_key": staging_key(task_id), **kept_call_params()})
    return {"task_id": task_id, "aborted_runs": aborted,
            "staged_nodes_removed": int(staged[0]["nodes"]) if staged else 0}


def _public(props: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in props.items() if k not in ("run_key", "task_key", "plan_json",
                                                       "summary_json")}
    out["plan"] = json.loads(props.get("plan_json", "null"))
    out["summary"] = json.loads(props.get("summary_json", "{}"))
    return out
