"""`provrepair repair`: plan, replay and write back one task, safely.

    lock the task (provenance/lock.py) → already repaired? → roll back runs that died
    before committing → plan (Cypher) → replay (executor, reasoner, tools) → record run +
    marks → new nodes → commit → unlock

"Already repaired" is decided inside the lock, against the latest committed *repair* of the
stored task version (recorded plans do not count): a task version is repaired once, and
re-running `repair` returns that run's report. A repair that stops before a side effect
(`needs_human`) still applies its memory side (docs/method.md §5, step 1): the diagnosed
faults are deleted and the plan's quarantine applied, so the agent cannot read them again;
nothing of the replay is written. The stop lists every call a person must decide about
(step, tool, canonical arguments, call hash), recorded in the call log
(repair/tools/calllog.py). After a person decided, `resume` records their decisions there,
bound to the calls the stop showed (`--approve s_012` approves exactly that call; decisions
accumulate over resumes), and replays the stopped run's plan again in a new run; a call the
log has an answer for is reused, never sent again. `dry_run` takes no lock and writes nothing
at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from provrepair.provenance.checkpoints import checkpoint
from provrepair.provenance.errors import NothingToResume, TaskConflict, TaskIncomplete
from provrepair.provenance.keys import node_uid, task_key
from provrepair.provenance.lock import task_lock
from provrepair.provenance.models import Case, MemoryRecord
from provrepair.provenance.readback import get_task_props, read_case
from provrepair.provenance.state.runs import ReportStatus, RunStatus, commit_props, run_params, wrote_replay
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.vocab import MemoryStatus
from provrepair.repair.methods import Method, MethodContext, get_method
from provrepair.repair.methods.base import Decision
from provrepair.repair.methods.ours import QuarantiningCopies
from provrepair.repair.plan.model import Inherited, RepairPlan, Scope
from provrepair.repair.plan.scope import task_namespace, with_scope
from provrepair.repair.reasoners.base import Reasoner
from provrepair.repair.replay.executor import Executor, ReplayResult
from provrepair.repair.replay.prior import PriorOutcome, read_prior
from provrepair.repair.replay.state import RepairState
from provrepair.repair.replay.writeback import commit, write_new_nodes
from provrepair.repair.runs import (
    latest_repair,
    list_runs,
    new_run_id,
    record_plan_run,
    roll_back_unfinished,
    run_key,
)
from provrepair.repair.scope_sweep import quarantine_namespace_copies
from provrepair.repair.tools.calllog import CallLog, Calls, record_decisions, record_stop
from provrepair.repair.tools.declared import ToolSet
from provrepair.repair.tools.packs import domain_functions, domain_tools
from provrepair.repair.tools.registry import ToolRegistry

METHOD = "dependency_guided"


@dataclass(frozen=True)
class Resume:
    """What a person decided about a stopped repair (`repair --resume`)."""

    # the calls the stop showed at these steps may be issued (`STEP` or `STEP:HASH`, the hash
    # then checked against the call shown)
    approve: frozenset[str] = frozenset()
    skip: frozenset[str] = frozenset()      # do not re-issue these; their steps stay unresolved
    continuing: bool = False                # `--continue`: finish a partial repair instead


@dataclass(frozen=True)
class Shared:
    """What a namespace repair hands one conversation (repair/namespace_repair.py)."""

    inherited: tuple[Inherited, ...] = ()                    # seeds beside the faults
    carried: tuple[tuple[MemoryRecord, str], ...] = ()       # (rewritten record, it replaces)
    taken: frozenset[str] = frozenset()  # ids of the shared memory: new records get others


@dataclass
class RepairReport:
    task_id: str
    run_id: str | None
    status: str          # provenance/state/runs.py ReportStatus
    answer: str | None
    plan: dict[str, Any]
    deleted: list[str] = field(default_factory=list)
    quarantined: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    replayed: dict[str, str] = field(default_factory=dict)       # old step → new step
    new_memory_ids: list[str] = field(default_factory=list)
    active_memory_ids: list[str] = field(default_factory=list)   # the repaired active store
    unresolved: dict[str, str] = field(default_factory=dict)
    needs_human: dict[str, str] | None = None   # the first pending call's {step_id, reason}
    # every call the stop waits on: {step_id, tool, args, call_id, side_effect, kind, reason}
    pending: list[dict[str, Any]] = field(default_factory=list)
    # the calls this run sent or reused, as the call log has them (repair/tools/calllog.py)
    calls: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    decision: dict[str, Any] = field(default_factory=dict)       # what planning cost (Decision)
    reasoner: dict[str, Any] = field(default_factory=dict)       # model, prompt contract, tokens
    continues: str | None = None  # the partial run whose resolved steps this run reuses
    # `--scope namespace --quarantine-copies`: what this call removed in the namespace's other
    # tasks ({task_id, memory_id, fault_id, same_record}: quarantined, or deleted when
    # same_record; repair/scope_sweep.py)
    namespace_quarantined: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def repair_task(store: GraphStore, task_id: str, reasoner: Reasoner, *,
                faults: list[str] | None = None, dry_run: bool = False,
                early_cutoff: bool = True, method: str = METHOD,
                resume: Resume | None = None, tools: ToolSet | None = None,
                continue_partial: bool = False, quarantine_copies: bool = False,
                scope: Scope = "task", shared: Shared | None = None) -> RepairReport:
    """`tools`: the agent's own tools with their side-effect classes (repair/tools/declared.py);
    a tool they, the case and the domain pack leave undeclared is irreversible.
    `continue_partial`: finish the task's `partial` repair in one more run, regenerating only
    what it left unresolved (repair/replay/prior.py). `quarantine_copies`: also quarantine the
    plan's suspected copies (repair/plan/echo.py). `scope="namespace"`: the sweep also looks
    in the other tasks of the task's memory namespace, and with `quarantine_copies`
    quarantines what it finds there in their own tasks, once this task's repair committed
    (repair/plan/scope.py, repair/scope_sweep.py). `shared`: what a namespace repair hands
    this conversation (repair/namespace_repair.py): the records earlier conversations' plans
    reached that it read, and the records their repairs rewrote in their place."""
    if continue_partial:
        resume = Resume(continuing=True) if resume is None else resume
    if scope == "namespace":
        task_namespace(store, task_id)  # refused before anything is done: NoNamespace
    try:
        report = _repair_task(store, task_id, reasoner, faults, dry_run, early_cutoff, method,
                              resume, tools, quarantine_copies, shared or Shared())
        if scope == "namespace":
            _sweep_namespace(store, report, quarantine_copies)
        return report
    finally:
        if tools is not None:
            tools.close()  # stop the MCP servers the repair started


def _repair_task(store: GraphStore, task_id: str, reasoner: Reasoner,
                 faults: list[str] | None, dry_run: bool, early_cutoff: bool, method: str,
                 resume: Resume | None, tools: ToolSet | None,
                 quarantine_copies: bool, shared: Shared) -> RepairReport:
    planner = get_method(method)
    if quarantine_copies:  # the echo sweep acts on what it reports (repair/plan/echo.py)
        planner = QuarantiningCopies(planner)
    run_id = new_run_id()
    if dry_run:  # read-only: no lock, no rollback, nothing written
        report = _replay(store, task_id, reasoner, faults, early_cutoff, planner, run_id,
                         tools=tools, dry_run=True, shared=shared)[0]
        report.run_id, report.status = None, ReportStatus.DRY_RUN.value
        return report
    checkpoint("before_lock")
    with task_lock(store, task_id, run_id, "repair"):
        checkpoint("after_lock")
        _require_complete(store, task_id)
        previous = latest_repair(store, task_id)
        stopped_plan, prior, base = None, None, None
        if resume is not None:
            stopped_plan = _resumable_plan(task_id, previous, resume)
            assert previous is not None
            record_decisions(store, task_id, run_id, previous["summary"], resume.approve,
                             resume.skip)
            base = previous["run_id"] if resume.continuing else previous["summary"].get("continues")
            prior = _prior(store, task_id, base) if base is not None else None
        elif previous is not None:
            _refuse_other_faults(task_id, previous, faults, shared.inherited)
            return _previous_report(previous)
        roll_back_unfinished(store, task_id)
        report, plan, state, result, calls = _replay(store, task_id, reasoner, faults,
                                                     early_cutoff, planner, run_id, stopped_plan,
                                                     resume, tools, prior, shared=shared)
        report.continues = base
        _write(store, plan, state, result, run_id, report, method, calls)
        return report


def _sweep_namespace(store: GraphStore, report: RepairReport, quarantine: bool) -> None:
    """The report's plan with the namespace's copies (read now); with `quarantine`, those
    quarantined in their own tasks under the report's run id (not for a dry run)."""
    plan = with_scope(store, RepairPlan.model_validate(report.plan), "namespace")
    report.plan = plan.model_dump()
    if quarantine and report.run_id is not None and report.status != ReportStatus.DRY_RUN:
        done = quarantine_namespace_copies(store, plan, report.run_id)
        report.namespace_quarantined = [c.model_dump() for c in done]


def _prior(store: GraphStore, task_id: str, base: str) -> PriorOutcome:
    """What the runs up to the partial run `base` replayed, and what `base` left unresolved."""
    runs = [r for r in list_runs(store, task_id) if wrote_replay(r["status"])]
    runs.sort(key=lambda r: r["created"])
    order = [r["run_id"] for r in runs]
    summary = next(r["summary"] for r in runs if r["run_id"] == base)
    return read_prior(store, task_id, order[:order.index(base) + 1],
                      set(summary.get("unresolved") or {}))


def _refuse_other_faults(task_id: str, previous: dict[str, Any], faults: list[str] | None,
                         inherited: tuple[Inherited, ...] = ()) -> None:
    """`repair --faults X` on a version repaired with other faults: refused, never answered
    with the old repair (which did not treat X). The same seeds get the committed repair.
    A repair's seeds are its faults and the records a namespace repair hands it
    (`Shared.inherited`, issue 37): a conversation reached through other records than the
    ones it was repaired for is refused too, not answered with a repair of another fault."""
    repaired = sorted(previous["plan"].get("delete_memory_ids", []))
    before = [Inherited.model_validate(i) for i in previous["plan"].get("inherited") or []]
    if (faults is None and not inherited) or (
            (faults is None or sorted(set(faults)) == repaired)
            and _seed_set(inherited) == _seed_set(before)):
        return
    asked = sorted(set(faults)) if faults is not None else repaired
    raise TaskConflict(
        f"task {task_id!r} is already repaired (run {previous['run_id']}) with faults "
        f"{', '.join(repaired) or '(none)'}{_seeds_text(before)}, not "
        f"{', '.join(asked) or '(none)'}{_seeds_text(inherited)}; a task version is repaired "
        "once: `ingest --replace` it to repair it with other faults")


def _seed_set(inherited: Iterable[Inherited]) -> set[tuple[str, bool]]:
    """What an inherited seed changes in a plan: the node, and whether it is removed."""
    return {(i.memory_id, i.removed) for i in inherited}


def _seeds_text(inherited: Iterable[Inherited]) -> str:
    names = sorted({f"{i.memory_id} (from {i.from_task})" for i in inherited})
    return f" and inherited records {', '.join(names)}" if names else ""


def _resumable_plan(task_id: str, previous: dict[str, Any] | None,
                    resume: Resume) -> RepairPlan:
    """The plan of the task's stopped (or, continuing, partial) repair, checked against the
    person's decisions."""
    state = "has no repair" if previous is None else f"is {previous['status']}"
    if resume.continuing and (previous is None or previous["status"] != RunStatus.PARTIAL):
        hint = (" (it waits for a person: --resume --approve/--skip)" if previous is not None
                and previous["status"] == RunStatus.NEEDS_HUMAN else "")
        raise NothingToResume(f"task {task_id!r} {state}: nothing to continue (only a partial "
                              f"repair can be continued){hint}")
    if not resume.continuing and (previous is None or previous["status"] != RunStatus.NEEDS_HUMAN):
        raise NothingToResume(f"task {task_id!r} {state}: nothing to resume (only a repair "
                              "that stopped with needs_human can be resumed)")
    assert previous is not None
    return RepairPlan.model_validate(previous["plan"])


def _replay(store: GraphStore, task_id: str, reasoner: Reasoner, faults: list[str] | None,
            early_cutoff: bool, planner: Method, run_id: str, plan: RepairPlan | None = None,
            resume: Resume | None = None, tools: ToolSet | None = None,
            prior: PriorOutcome | None = None, dry_run: bool = False,
            shared: Shared | None = None,
            ) -> tuple[RepairReport, RepairPlan, RepairState, ReplayResult, Calls]:
    case = read_case(store, task_id, with_evaluation=False)
    decision = Decision()
    shared = shared or Shared()
    if plan is None:
        planned = planner.plan(MethodContext(store, task_id, case, faults, reasoner,
                                             shared.inherited))
        plan, decision = planned.plan, planned.decision
    resume = resume or Resume()
    registry = ToolRegistry(case.tools, case.world, domain_tools(case.domain), declared=tools)
    calls = Calls(registry, CallLog(store, task_id, run_id, durable=not dry_run), dry_run)
    # an ablation may turn early cutoff off (without selective replay replays everything)
    stored = [(row["id"], row["kind"])
              for row in store.run("list_task_node_ids", {"task_key": task_key(task_id)})]
    executor = Executor(case, plan, reasoner, registry, run_id[-6:],
                        early_cutoff=early_cutoff and planner.early_cutoff,
                        functions=domain_functions(case.domain), stored_ids=stored,
                        skipped=_steps(resume.skip), prior=prior, calls=calls,
                        carried=shared.carried, reserved=shared.taken)
    result = executor.run()
    report = _report(task_id, run_id, plan, executor.state, result)
    report.decision = asdict(decision)
    usage = getattr(reasoner, "usage", None)  # the model's reasoners say what they used
    report.reasoner = usage() if callable(usage) else {"reasoner": reasoner.name}
    report.pending = [p.to_json() for p in result.pending]
    report.calls = [calls.log.calls[c].public() for c in dict.fromkeys(calls.seen)]
    return report, plan, executor.state, result, calls


def _steps(decided: frozenset[str]) -> frozenset[str]:
    """The step ids of `--approve`/`--skip` values (`STEP` or `STEP:HASH`)."""
    return frozenset(value.split(":", 1)[0] for value in decided)


def _require_complete(store: GraphStore, task_id: str) -> None:
    """A streamed task still being recorded (no `end` yet) is not repaired: its trace may
    still grow, and a plan over half a trace would be wrong."""
    if get_task_props(store, task_id).get("complete") is False:
        raise TaskIncomplete(f"task {task_id!r} is still being recorded (its stream has no "
                             "`end` event yet); repair it once the recording is complete")


def _previous_report(previous: dict[str, Any]) -> RepairReport:
    """The committed repair's own report: `already_repaired` for a full repair; a stop still
    waiting for a person (`needs_human`: resume with --resume) or a `partial` repair (finish
    it with --continue) as it is."""
    summary = previous["summary"]
    if summary.get("status") in (RunStatus.NEEDS_HUMAN, RunStatus.PARTIAL):
        return RepairReport(**summary)
    return RepairReport(**{**summary, "status": ReportStatus.ALREADY_REPAIRED.value})


def _write(store: GraphStore, plan: RepairPlan, state: RepairState, result: ReplayResult,
           run_id: str, report: RepairReport, method: str, calls: Calls) -> None:
    record_plan_run(store, plan, method=method, status=None, run_id=run_id)
    checkpoint("after_run_record")
    # the read-only calls' answers; at a stop, the calls it shows
    record_stop(calls.log, run_id, result.pending)
    props = {**commit_props(report.status), "answer": report.answer or "",
             "summary_json": json.dumps(report.to_json())}
    if report.status == RunStatus.NEEDS_HUMAN:  # stop before that step: memory side only
        store.run("commit_repair_run", {"run_key": run_key(plan.task_id, run_id),
                                        "run_id": run_id, "props": props,
                                        "rows": memory_side_rows(plan, state.case),
                                        **run_params("writing")})
        return
    write_new_nodes(store, state, result, run_id)
    commit(store, state, result, run_key(plan.task_id, run_id), run_id, props)


def memory_side_rows(plan: RepairPlan, case: Case) -> list[dict[str, Any]]:
    """Status changes of a stopped repair: faults deleted, the plan's quarantine applied.
    A record already in that state (an earlier run of the version applied it) is left as it
    is, so its audit trail keeps naming the run that changed it."""
    key = task_key(plan.task_id)
    now = {m.memory_id: m.status for m in case.memory_store}
    wanted = [(m, MemoryStatus.DELETED) for m in plan.delete_memory_ids] + \
        [(m, MemoryStatus.QUARANTINED) for m in plan.quarantine_memory_ids]
    return [{"uid": node_uid(key, m), "status": status.value, "audit": True}
            for m, status in wanted if now.get(m) is not status]


def _report(task_id: str, run_id: str | None, plan: RepairPlan, state: RepairState,
            result: ReplayResult) -> RepairReport:
    if result.needs_human:
        return _stopped_report(task_id, run_id, plan, state, result)
    active = sorted(m.memory_id for m in state.memories.values() if m.status is MemoryStatus.ACTIVE)
    # `repaired` only when every replayed step resolved (unresolved ones propagate, executor.py)
    partial = bool(result.unresolved)
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
                "replayed_steps": len(plan.replay_step_ids) - len(result.cutoff)
                - len(result.reused), "reused_steps": len(result.reused),
                "early_cutoff_steps": len(result.cutoff), "tool_calls": result.tool_calls,
                "reused_calls": result.reused_calls, "original_steps": len(state.original)})


def _stopped_report(task_id: str, run_id: str | None, plan: RepairPlan, state: RepairState,
                    result: ReplayResult) -> RepairReport:
    """A repair that stopped before a side effect: only its memory side is applied."""
    removed = set(plan.delete_memory_ids) | set(plan.quarantine_memory_ids)
    active = sorted(m.memory_id for m in state.case.memory_store
                    if m.status is MemoryStatus.ACTIVE and m.memory_id not in removed)
    return RepairReport(
        task_id=task_id, run_id=run_id, status=ReportStatus.NEEDS_HUMAN.value, answer=None,
        plan=plan.model_dump(), deleted=plan.delete_memory_ids,
        quarantined=plan.quarantine_memory_ids, active_memory_ids=active,
        needs_human=result.needs_human,
        counts={"llm_calls": result.llm_calls, "tokens": result.tokens, "replayed_steps": 0,
                "reused_steps": len(result.reused), "early_cutoff_steps": 0,
                "tool_calls": result.tool_calls, "reused_calls": result.reused_calls,
                "original_steps": len(state.original)})


def run_repair(store: GraphStore, task_id: str, reasoner: Reasoner | str = "offline", *,
               model: str | None = None, max_calls: int | None = None,
               budget: int | None = None, **options: Any) -> RepairReport:
    """`provrepair repair` as a call: `reasoner` is a registered name ("offline", "openai",
    a plugin's) or a Reasoner; `options` are those of `repair_task` (faults, dry_run, method,
    resume, continue_partial, tools, quarantine_copies, scope)."""
    from provrepair.repair.reasoners import as_reasoner

    return repair_task(store, task_id, as_reasoner(reasoner, model, max_calls=max_calls,
                                                   budget=budget), **options)

