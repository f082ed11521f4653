"""Quarantining a namespace's suspected copies in their own tasks (`repair --scope namespace
--quarantine-copies`; the copies are found by repair/plan/scope.py).

A copy is quarantined; the fault's own record of the shared memory, as another task recorded
it (`same_record`, repair/plan/scope.py), is deleted, as the repair deletes the fault. Each
other task holding copies gets a `:RepairRun` of its own with the repair's run id (its
run key is that task's key + the id, so the two never collide, and every quarantined record's
audit fields name the repair run that found it), method `echo_sweep`, status `swept`
(provenance/state/runs.py): written `writing`, then committed in ONE statement with the
status changes (cypher/replay/commit_repair_run), under that task's lock, like any repair.
A sweep is not a repair of that task (it can still be repaired), but its memory patch covers
it (`provrepair patch`/`apply` of that task carry the quarantines, with the reason).

Idempotent: a task this run already swept is left alone; a sweep that died before its commit
is redone; a copy no longer visible (quarantined since, or its task re-ingested) is skipped.
Run after the repair of the planned task committed, so re-running the same command (the
planned task then answers `already_repaired`, with the same run id) finishes a sweep an error
interrupted.
"""

from __future__ import annotations

import json
from itertools import groupby
from typing import Any

from provrepair.provenance.errors import TaskConflict
from provrepair.provenance.keys import node_uid, task_key
from provrepair.provenance.lock import task_lock
from provrepair.provenance.state.memory import visible_now
from provrepair.provenance.state.runs import RunStatus, commit_props, is_finished, run_params
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.vocab import MemoryStatus
from provrepair.repair.plan.model import NamespaceCopy, RepairPlan
from provrepair.repair.runs import list_runs, record_plan_run, run_key

METHOD = "echo_sweep"


def quarantine_namespace_copies(store: GraphStore, plan: RepairPlan,
                                run_id: str) -> list[NamespaceCopy]:
    """Quarantine the plan's `namespace_copies`, each in its own task; the copies this call
    quarantined (none already swept by `run_id`)."""
    done: list[NamespaceCopy] = []
    ordered = sorted(plan.namespace_copies, key=lambda c: c.task_id)
    for other, copies in groupby(ordered, key=lambda c: c.task_id):
        try:
            done += _sweep(store, plan, other, list(copies), run_id)
        except TaskConflict as exc:  # another writer holds that task: say what is done
            swept = f" (quarantined so far: {_names(done)})" if done else ""
            raise TaskConflict(
                f"the sweep of namespace {plan.memory_namespace!r} after run {run_id} of task "
                f"{plan.task_id!r} stopped at task {other!r}{swept}: {exc}; run the same "
                "command again to finish it") from exc
    return done


def _names(copies: list[NamespaceCopy]) -> str:
    return ", ".join(f"{c.task_id}/{c.memory_id}" for c in copies)


def sweep_plan(plan: RepairPlan, other: str, copies: list[NamespaceCopy],
               run_id: str) -> RepairPlan:
    """The run recorded in task `other`: it quarantines `copies` (deletes those that are the
    fault's own record), each naming the fault, its task and the repair run; nothing else."""
    return RepairPlan(
        task_id=other, delete_memory_ids=[c.memory_id for c in copies if c.same_record],
        quarantine_memory_ids=[c.memory_id for c in copies if not c.same_record],
        invalidate_claim_ids=[],
        replay_step_ids=[], preserve_step_ids=[], suspicious_step_ids=[], seeds={},
        affected_ids=[], supported_ids=[], answer_relevant_ids=[],
        suspected_copies={c.memory_id: f"{c.fault_id} of task {plan.task_id} (repair run "
                                       f"{run_id})" for c in copies},
        scope="namespace", memory_namespace=plan.memory_namespace)


def _sweep(store: GraphStore, plan: RepairPlan, other: str, copies: list[NamespaceCopy],
           run_id: str) -> list[NamespaceCopy]:
    with task_lock(store, other, run_id, "repair"):
        earlier = next((r for r in list_runs(store, other) if r["run_id"] == run_id), None)
        if earlier is not None and is_finished(earlier["status"]):
            return []  # this repair run swept the task already
        key = task_key(other)
        now = {r["props"]["id"]: r["props"]
               for r in store.run("list_task_nodes", {"task_key": key})
               if r["props"].get("kind") == "memory"}
        live = [c for c in copies if c.memory_id in now and visible_now(now[c.memory_id])]
        if not live:
            return []
        summary: dict[str, Any] = {
            "swept_by": {"task_id": plan.task_id, "run_id": run_id},
            "memory_namespace": plan.memory_namespace,
            "quarantined": [c.memory_id for c in live]}
        record_plan_run(store, sweep_plan(plan, other, live, run_id), method=METHOD,
                        status=None, run_id=run_id, extra=summary)
        rows = [{"uid": node_uid(key, c.memory_id), "audit": True,
                 "status": (MemoryStatus.DELETED if c.same_record
                            else MemoryStatus.QUARANTINED).value} for c in live]
        store.run("commit_repair_run", {
            "run_key": run_key(other, run_id), "run_id": run_id, "rows": rows,
            "props": {**commit_props(RunStatus.SWEPT), "summary_json": json.dumps(summary)},
            **run_params("writing")})
    return live
