"""`provrepair repair`: plan, replay and write back one task, safely.

    lock the task (provenance/lock.py) → already repaired? → roll back runs that died
    before committing → plan (Cypher) → replay (executor, reasoner, tools) → record run +
    marks → new nodes → commit → unlock

"Already repaired" is decided inside the lock, against the latest committed *repair* of the
stored task version (recorded plans do not count): a task version is repaired once, and
re-running `repair` returns that run's report. A repair that stops before a side effect
(`needs_human`) still applies its memory side (docs/method.md §5, step 1): the diagnosed
faults are deleted and the plan's quarantine applied, so the agent cannot read them again;
nothing of the replay is written. After a person decided, `resume` (with the steps they
approve or skip) replays the stopped run's plan again in a new run. `dry_run` takes no lock
and writes nothing at all.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from provrepair.provenance.errors import NothingToResume, TaskConflict, TaskIncomplete
from provrepair.provenance.keys import node_uid, task_key
from provrepair.provenance.lock import task_lock
from provrepair.provenance.order import final_answer_step
from provrepair.provenance.readback import get_task_props, read_case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.testhooks import checkpoint
from provrepair.provenance.vocab import MemoryStatus, RunStatus
from provrepair.repair.methods import Method, MethodContext, get_method
from provrepair.repair.methods.base import Decision
from provrepair.repair.plan.model import RepairPlan
from provrepair.repair.reasoners.base import Reasoner
from provrepair.repair.replay.executor import Executor, ReplayResult
from provrepair.repair.replay.state import RepairState
from provrepair.repair.replay.writeback import commit, write_new_nodes
from provrepair.repair.runs import (
    latest_repair,
    new_run_id,
    record_plan_run,
    roll_back_unfinished,
    run_key,
)
from provrepair.repair.tools.packs import domain_functions, domain_tools
from provrepair.repair.tools.registry import ToolRegistry

METHOD = "dependency_guided"


@dataclass(frozen=True)
class Resume:
    """What a person decided about a stopped repair (`repair --resume`)."""

    approve: frozenset[str] = frozenset()   # re-issue these side-effecting calls
    skip: frozenset[str] = frozenset()      # do not re-issue these; their steps stay unresolved


@dataclass
class RepairReport:
    task_id: str
    run_id: str | None
    status: str          # repaired | partial | needs_human | dry_run | already_repaired
    answer: str | None
    plan: dict[str, Any]
    deleted: list[str] = field(default_factory=list)
    quarantined: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    replayed: dict[str, str] = field(default_factory=dict)       # old step → new step
    new_memory_ids: list[str] = field(default_factory=list)
    active_memory_ids: list[str] = field(default_factory=list)   # the repaired active store
    unresolved: dict[str, str] = field(default_factory=dict)
    needs_human: dict[str, str] | None = None
    counts: dict[str, int] = field(default_factory=dict)
    decision: dict[str, Any] = field(default_factory=dict)       # what planning cost (Decision)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def repair_task(store: GraphStore, task_id: str, reasoner: Reasoner, *,
                faults: list[str] | None = None, dry_run: bool = False,
                early_cutoff: bool = True, method: str = METHOD,
                resume: Resume | None = None) -> RepairReport:
    planner = get_method(method)
    run_id = new_run_id()
    if dry_run:  # read-only: no lock, no rollback, nothing written
        report = _replay(store, task_id, reasoner, faults, early_cutoff, planner, run_id)[0]
        report.run_id, report.status = None, "dry_run"
        return report
    checkpoint("before_lock")
    with task_lock(store, task_id, run_id, "repair"):
        checkpoint("after_lock")
        _require_complete(store, task_id)
        previous = latest_repair(store, task_id)
        stopped_plan = None
        if resume is not None:
            stopped_plan = _resumable_plan(task_id, previous, resume)
        elif previous is not None:
            _refuse_other_faults(task_id, previous, faults)
            return _previous_report(previous)
        roll_back_unfinished(store, task_id)
        report, plan, state, result = _replay(store, task_id, reasoner, faults, early_cutoff,
                                              planner, run_id, stopped_plan, resume)
        _write(store, plan, state, result, run_id, report, method)
        return report


def _refuse_other_faults(task_id: str, previous: dict[str, Any],
                         faults: list[str] | None) -> None:
    """`repair --faults X` on a version repaired with other faults: refused, never answered
    with the old repair (which did not treat X). The same faults get the committed repair."""
    repaired = sorted(previous["plan"].get("delete_memory_ids", []))
    if faults is None or sorted(set(faults)) == repaired:
        return
    raise TaskConflict(
        f"task {task_id!r} is already repaired (run {previous['run_id']}) with faults "
        f"{', '.join(repaired) or '(none)'}, not {', '.join(sorted(set(faults)))}; a task "
        "version is repaired once: `ingest --replace` it to repair it with other faults")


def _resumable_plan(task_id: str, previous: dict[str, Any] | None,
                    resume: Resume) -> RepairPlan:
    """The plan of the task's stopped repair, checked against the person's decisions."""
    if previous is None or previous["status"] != RunStatus.NEEDS_HUMAN:
        state = "has no repair" if previous is None else f"is {previous['status']}"
        raise NothingToResume(f"task {task_id!r} {state}: nothing to resume (only a repair "
                              "that stopped with needs_human can be resumed)")
    plan = RepairPlan.model_validate(previous["plan"])
    for step_id in sorted(resume.approve | resume.skip):
        if step_id not in plan.replay_step_ids:
            raise NothingToResume(f"task {task_id!r}: step {step_id!r} is not replayed by the "
                                  "stopped repair (--approve/--skip name a step it stopped at)")
    return plan


def _replay(store: GraphStore, task_id: str, reasoner: Reasoner, faults: list[str] | None,
            early_cutoff: bool, planner: Method, run_id: str, plan: RepairPlan | None = None,
            resume: Resume | None = None,
            ) -> tuple[RepairReport, RepairPlan, RepairState, ReplayResult]:
    case = read_case(store, task_id, with_evaluation=False)
    decision = Decision()
    if plan is None:
        planned = planner.plan(MethodContext(store, task_id, case, faults, reasoner))
        plan, decision = planned.plan, planned.decision
    resume = resume or Resume()
    tools = ToolRegistry(case.tools, case.world, domain_tools(case.domain),
                         approved=resume.approve)
    # an ablation may turn early cutoff off (without selective replay replays everything)
    stored = [(row["id"], row["kind"])
              for row in store.run("list_task_node_ids", {"task_key": task_key(task_id)})]
    executor = Executor(case, plan, reasoner, tools, run_id[-6:],
                        early_cutoff=early_cutoff and planner.early_cutoff,
                        functions=domain_functions(case.domain), stored_ids=stored,
                        skipped=resume.skip)
    result = executor.run()
    report = _report(task_id, run_id, plan, executor.state, result)
    report.decision = asdict(decision)
    return report, plan, executor.state, result


def _require_complete(store: GraphStore, task_id: str) -> None:
    """A streamed task still being recorded (no `end` yet) is not repaired: its trace may
    still grow, and a plan over half a trace would be wrong."""
    if get_task_props(store, task_id).get("complete") is False:
        raise TaskIncomplete(f"task {task_id!r} is still being recorded (its stream has no "
                             "`end` event yet); repair it once the recording is complete")


def _previous_report(previous: dict[str, Any]) -> RepairReport:
    """The committed repair's own report: `already_repaired`, or a stop still waiting for a
    person (`needs_human`: the memory side is applied, resume with --resume)."""
    summary = previous["summary"]
    if summary.get("status") == RunStatus.NEEDS_HUMAN:
        return RepairReport(**summary)
    return RepairReport(**{**summary, "status": "already_repaired"})


def _write(store: GraphStore, plan: RepairPlan, state: RepairState, result: ReplayResult,
           run_id: str, report: RepairReport, method: str) -> None:
    record_plan_run(store, plan, method=method, status=None, run_id=run_id)
    checkpoint("after_run_record")
    props = {"status": report.status, "answer": report.answer or "", "finished": True,
             "summary_json": json.dumps(report.to_json())}
    if report.status == RunStatus.NEEDS_HUMAN:  # stop before that step: memory side only
        store.run("commit_repair_run", {"run_key": run_key(plan.task_id, run_id),
                                        "run_id": run_id, "props": props,
                                        "rows": memory_side_rows(plan)})
        return
    write_new_nodes(store, state, result, run_id)
    commit(store, state, result, run_key(plan.task_id, run_id), run_id, props)


def memory_side_rows(plan: RepairPlan) -> list[dict[str, Any]]:
    """Status changes of a stopped repair: faults deleted, the plan's quarantine applied."""
    key = task_key(plan.task_id)
    return ([{"uid": node_uid(key, m), "status": MemoryStatus.DELETED.value, "audit": True}
             for m in plan.delete_memory_ids]
            + [{"uid": node_uid(key, m), "status": MemoryStatus.QUARANTINED.value, "audit": True}
               for m in plan.quarantine_memory_ids])


def _report(task_id: str, run_id: str | None, plan: RepairPlan, state: RepairState,
            result: ReplayResult) -> RepairReport:
    if result.needs_human:
        return _stopped_report(task_id, run_id, plan, state, result)
    active = sorted(m.memory_id for m in state.memories.values() if m.status.value == "active")
    final = final_answer_step(state.case)
    # the final answer could not be recomputed: the memory is repaired, the answer is not
    partial = final is not None and final.step_id in result.unresolved
    return RepairReport(
        task_id=task_id, run_id=run_id,
        status=RunStatus.PARTIAL.value if partial else RunStatus.REPAIRED.value,
        answer=result.answer,
        plan=plan.model_dump(), deleted=plan.delete_memory_ids,
        quarantined=plan.quarantine_memory_ids, restored=list(state.restored),
        replayed={old: new.step_id for new, old in result.new_steps if old is not None},
        new_memory_ids=[n.record.memory_id for n in state.new_memories],
        active_memory_ids=active, unresolved=result.unresolved, needs_human=result.needs_human,
        counts={"llm_calls": result.llm_calls, "tokens": result.tokens,
                "replayed_steps": len(plan.replay_step_ids) - len(result.cutoff),
                "early_cutoff_steps": len(result.cutoff), "tool_calls": result.tool_calls,
                "original_steps": len(state.original)})


def _stopped_report(task_id: str, run_id: str | None, plan: RepairPlan, state: RepairState,
                    result: ReplayResult) -> RepairReport:
    """A repair that stopped before a side effect: only its memory side is applied."""
    removed = set(plan.delete_memory_ids) | set(plan.quarantine_memory_ids)
    active = sorted(m.memory_id for m in state.case.memory_store
                    if m.status.value == "active" and m.memory_id not in removed)
    return RepairReport(
        task_id=task_id, run_id=run_id, status="needs_human", answer=None,
        plan=plan.model_dump(), deleted=plan.delete_memory_ids,
        quarantined=plan.quarantine_memory_ids, active_memory_ids=active,
        needs_human=result.needs_human,
        counts={"llm_calls": result.llm_calls, "tokens": result.tokens, "replayed_steps": 0,
                "early_cutoff_steps": 0, "tool_calls": result.tool_calls,
                "original_steps": len(state.original)})


def run_repair(store: GraphStore, task_id: str, reasoner: Reasoner | str = "offline", *,
           model: str | None = None, **options: Any) -> RepairReport:
    """`provrepair repair` as a call: `reasoner` is "offline", "openai" or a Reasoner;
    `options` are those of `repair_task` (faults, dry_run, method, resume)."""
    if isinstance(reasoner, str):
        from provrepair.repair.reasoners import make_reasoner

        reasoner = make_reasoner(reasoner, model)
    return repair_task(store, task_id, reasoner, **options)

