"""`provrepair repair --namespace NS`: repair every conversation a fault reached across a shared
agent memory, in time order, as one namespace run (beyond the paper; issue 37).

    namespace lock → the run (the one left unfinished with these faults, else a new one with
    the namespace plan, repair/plan/namespace.py, stored once) → for each reached
    conversation in time order, each after the ones that handed it a record they remove
    (`repair_order`): its own `repair` (repair/service.py: its lock, its run in its
    history, once per task version) with what reached it and the records the earlier
    conversations' repairs rewrote → record its outcome on the run → unlock

A conversation's replay reads the shared memory as the earlier repairs left it: each record it
read that an earlier plan removed is replaced, in its repair, by that conversation's rewritten
version (`Shared.carried`, RepairState.carry), written with its run as a new version of the
same agent id; so the memory patch of every conversation, and the namespace patch
(repair/namespace_patch.py), agree on the record.

Resumable and kill -9 safe: the run's plan is stored before the first conversation is
repaired (planning again after a repair would read the repaired graph); each conversation's
repair commits in one statement (repair/replay/writeback.py), and running the same command
again takes up the unfinished run: a conversation repaired before answers with its committed
repair, whose outcome is then recorded. A conversation that stops for a person (an
irreversible or undeclared tool) stops the run there (later conversations may read what its
replay rewrites), listing the calls it waits on (step, tool, arguments, call hash; its own
run, so `provrepair pending --task TASK` shows them too): `repair --namespace NS --approve
TASK:STEP` (or `TASK:STEP:HASH`, or `--skip TASK:STEP`) resumes that conversation's repair
with the decision and goes on. Side effects follow the per-task rules of `repair`
(repair/service.py, repair/tools/calllog.py): every call is logged before and after it is
sent, a decision is bound to the call the stop showed and recorded before the resumed
replay, and no call is sent twice: the same command run again (after a crash, or after the
run finished) reuses what the log holds. A decision may name only a conversation that
stopped for a person; one already decided (the same command again) is passed over.

The run's status uses RunStatus values (provenance/state/runs.py): `writing` while
conversations remain, `needs_human` when one waits for a person, then `repaired`, or
`partial` when a conversation's replay left steps unresolved.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from provrepair.provenance.agent_records import agent_id
from provrepair.provenance.errors import InputError, ProvrepairError, TaskConflict
from provrepair.provenance.keys import agent_record_key, task_key
from provrepair.provenance.lock import acquire, new_owner_id, release
from provrepair.provenance.models import MemoryRecord
from provrepair.provenance.readback import get_task_props
from provrepair.provenance.rows import record_from_props
from provrepair.provenance.state.memory import visible_now
from provrepair.provenance.state.runs import ReportStatus, RunStatus
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan.model import ConversationPlan, NamespacePlan
from provrepair.repair.plan.namespace import plan_namespace
from provrepair.repair.reasoners import as_reasoner
from provrepair.repair.reasoners.base import Reasoner
from provrepair.repair.runs import latest_repair, new_run_id
from provrepair.repair.service import RepairReport, Resume, Shared, repair_task
from provrepair.repair.tools.declared import ToolSet

METHOD = "dependency_guided"
_REPAIR_ONLY = ("origin_run", "replaces", "status_before", "status_run", "status_recorded",
                "committed")
# a conversation's outcome that lets the run go on to the next one
GOES_ON = frozenset({ReportStatus.REPAIRED, ReportStatus.PARTIAL, ReportStatus.ALREADY_REPAIRED})


@dataclass
class ConversationOutcome:
    task_id: str
    status: str                    # the conversation's repair report status
    run_id: str | None             # its repair run (in its `history`)
    answer_given: str | None
    corrected_answer: str | None
    answer_affected: bool
    needs_human: dict[str, str] | None = None
    pending: list[dict[str, Any]] = field(default_factory=list)  # the calls a stop waits on
    unresolved: dict[str, str] = field(default_factory=dict)
    carried: list[str] = field(default_factory=list)  # records read as earlier repairs rewrote
    new_memory_ids: list[str] = field(default_factory=list)  # records its repair wrote
    replayed_steps: int = 0


@dataclass
class NamespaceReport:
    namespace: str
    run_id: str
    status: str          # RunStatus value, or already_repaired
    faults: list[str]
    conversations: list[ConversationOutcome]
    plan: dict[str, Any]

    @property
    def corrected_answers(self) -> list[dict[str, Any]]:
        """The answers the fault reached, beside the ones the repairs give now."""
        return [{"task_id": c.task_id, "answer_given": c.answer_given,
                 "corrected_answer": c.corrected_answer}
                for c in self.conversations if c.answer_affected]

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "corrected_answers": self.corrected_answers}


def namespace_lock_id(namespace: str) -> str:
    """The lock a namespace run holds (the task lock machinery, under a key no task has)."""
    return agent_record_key(namespace, "")


def run_key(namespace: str, run_id: str) -> str:
    return f"{agent_record_key(namespace, '')}{run_id}"


def list_namespace_runs(store: GraphStore, namespace: str) -> list[dict[str, Any]]:
    rows = store.run("list_namespace_runs", {"namespace": namespace})
    return [_public(r["props"]) for r in rows]


def repair_namespace(store: GraphStore, namespace: str, faults: list[str],
                     reasoner: Reasoner | str = "offline", *, model: str | None = None,
                     max_calls: int | None = None, budget: int | None = None,
                     tools: ToolSet | None = None, approve: Sequence[str] = (),
                     skip: Sequence[str] = ()) -> NamespaceReport:
    """Repair the conversations the records `faults` (agent ids) reached; `reasoner` is a
    registered name ("offline", "openai", a plugin's; with `model`, `max_calls`, `budget`) or
    a Reasoner, as `run_repair` takes it; `approve`/`skip`: what a person decided about the
    calls a conversation's repair stopped at, each `TASK:STEP` or `TASK:STEP:HASH` (the
    step's call as the stop showed it)."""
    brain = as_reasoner(reasoner, model, max_calls=max_calls, budget=budget)  # before the lock
    owner, lock = new_owner_id("namespace"), namespace_lock_id(namespace)
    try:
        acquire(store, lock, owner, "repair")
    except TaskConflict as exc:
        raise TaskConflict(f"memory namespace {namespace!r} is being repaired by another "
                           f"process ({exc}); wait for it to finish") from exc
    try:
        return _run(store, namespace, sorted(set(faults)), brain, tools, approve, skip)
    finally:
        with contextlib.suppress(ProvrepairError):  # the run's own error is the one to report
            release(store, lock, owner)


def _run(store: GraphStore, namespace: str, faults: list[str], reasoner: Reasoner,
         tools: ToolSet | None, approve: Sequence[str], skip: Sequence[str]
         ) -> NamespaceReport:
    run = _current_run(store, namespace, faults)
    plan = NamespacePlan.model_validate(run["plan"])
    outcomes: dict[str, dict[str, Any]] = run["conversations"]
    decisions = _decisions(run, plan, approve, skip)
    if run["status"] in (RunStatus.REPAIRED, RunStatus.PARTIAL):  # nothing waits: decided
        return _report(run, plan, outcomes, ReportStatus.ALREADY_REPAIRED.value)
    status = RunStatus.REPAIRED
    # ids of the shared memory: the records a repair writes get ids no conversation uses
    taken = {str(r["record_id"]) for r in store.run("list_namespace_records",
                                                      {"namespace": namespace})}
    for conversation in repair_order(plan):
        task = conversation.task_id
        done = outcomes.get(task)
        if done is not None and done["status"] in GOES_ON:  # decided, if it stopped
            status = RunStatus.PARTIAL if done["status"] == ReportStatus.PARTIAL else status
            continue
        _require_unchanged(store, task, run["hashes"].get(task))
        carried = _carried(store, conversation, plan)
        report = repair_task(
            store, task, reasoner, faults=list(conversation.plan.delete_memory_ids),
            method=METHOD, tools=tools, resume=_resume(store, task, decisions.get(task)),
            shared=Shared(tuple(conversation.plan.inherited), tuple(carried),
                          frozenset(taken | _written_ids(outcomes))))
        outcomes[task] = asdict(_outcome(conversation, report, carried))
        stopped = report.status == ReportStatus.NEEDS_HUMAN
        _save(store, run, RunStatus.NEEDS_HUMAN if stopped else RunStatus.WRITING, outcomes)
        if stopped:
            return _report(run, plan, outcomes, RunStatus.NEEDS_HUMAN.value)
        if report.status == ReportStatus.PARTIAL:
            status = RunStatus.PARTIAL
    _save(store, run, status, outcomes)
    return _report(run, plan, outcomes, status.value)


def repair_order(plan: NamespacePlan) -> list[ConversationPlan]:
    """The conversations in the order they are repaired: each after the ones that handed it
    a record they remove (its replay reads the record as their repairs rewrote it,
    `_carried`), else in time order. A conversation may have read a version written by one
    that started after it (they ran at once, repair/plan/namespace.py "Versions"); where such
    hand-ons go round in a circle, the earliest of it goes first."""
    remaining = list(plan.conversations)
    waits = {c.task_id: {link.from_task for link in c.reached_by
                         if link.from_task is not None and link.reach != "affected"}
             for c in remaining}
    order: list[ConversationPlan] = []
    while remaining:
        pending = {c.task_id for c in remaining}
        ready = next((c for c in remaining if not waits[c.task_id] & pending), None)
        if ready is None:  # every one waits: the earliest on a circle goes first
            ready = next(c for c in remaining if _on_circle(c.task_id, waits, pending))
        remaining.remove(ready)
        order.append(ready)
    return order


def _on_circle(task: str, waits: dict[str, set[str]], pending: set[str]) -> bool:
    """Whether `task` waits, through conversations still pending, on itself."""
    seen: set[str] = set()
    todo = list(waits[task] & pending)
    while todo:
        other = todo.pop()
        if other == task:
            return True
        if other not in seen:
            seen.add(other)
            todo += waits[other] & pending
    return False


def _decisions(run: dict[str, Any], plan: NamespacePlan, approve: Sequence[str],
               skip: Sequence[str]) -> dict[str, Resume]:
    """Per conversation, the person's decisions (`TASK:STEP[:HASH]` → `STEP[:HASH]`), TASK
    the longest task id of the run's conversations the value starts with (a task id may hold
    a colon; a step id holds none, repair/service.py). Only a conversation that stopped for
    a person, or already went on (the same command again), may be named: a call nobody has
    been shown cannot be decided."""
    tasks = sorted((c.task_id for c in plan.conversations), key=len, reverse=True)
    waiting = [t for t, o in run["conversations"].items()
               if o["status"] == ReportStatus.NEEDS_HUMAN]
    found: dict[str, tuple[set[str], set[str]]] = {}
    for kind, values in (("approve", approve), ("skip", skip)):
        for value in values:
            task = next((t for t in tasks if value.startswith(f"{t}:")
                         and len(value) > len(t) + 1), None)
            if task is None:
                raise InputError(
                    f"--{kind} {value}: name a step of a conversation of namespace run "
                    f"{run['run_id']} as TASK:STEP (or TASK:STEP:HASH); it waits on "
                    f"{', '.join(waiting) or 'no conversation'}")
            outcome = run["conversations"].get(task)
            if outcome is None:
                raise InputError(
                    f"--{kind} {value}: conversation {task!r} has not been repaired yet, so no "
                    f"call of it has been shown to decide about; the run waits on "
                    f"{', '.join(waiting) or 'no conversation'}")
            found.setdefault(task, (set(), set()))[kind == "skip"].add(value[len(task) + 1:])
    return {task: Resume(frozenset(a), frozenset(s)) for task, (a, s) in found.items()}


def _resume(store: GraphStore, task_id: str, decided: Resume | None) -> Resume | None:
    """The decisions to resume a stopped conversation with: none once its repair no longer
    waits (a resume that committed before the run recorded it: the same command again)."""
    if decided is None:
        return None
    latest = latest_repair(store, task_id)
    return decided if latest is not None and latest["status"] == RunStatus.NEEDS_HUMAN \
        else None


def _current_run(store: GraphStore, namespace: str, faults: list[str]) -> dict[str, Any]:
    """The latest run of these faults if it is unfinished (to go on with); else the namespace
    plan computed now, stored before anything is repaired: a new run, or, after finished
    runs of these faults, a follow-up run for the conversations (or the records reaching
    them) they did not cover (a transcript ingested since), which carries the outcomes of
    the conversations they covered; when there are none, the latest finished run (to
    report: already repaired)."""
    runs = [r for r in list_namespace_runs(store, namespace) if r["faults"] == faults]
    if runs and runs[-1]["status"] not in (RunStatus.REPAIRED, RunStatus.PARTIAL):
        return runs[-1]
    plan, _ = plan_namespace(store, namespace, faults)
    outcomes: dict[str, dict[str, Any]] = {}
    if runs:
        covered = _covered(runs)
        done = {c.task_id for c in plan.conversations
                if c.task_id in covered and _seed_ids(c) <= covered[c.task_id][0]}
        if len(done) == len(plan.conversations):
            return runs[-1]
        plan = plan.model_copy(update={"conversations": [
            covered[c.task_id][2] if c.task_id in done else _as_left(c, covered)
            for c in plan.conversations]})
        outcomes = {task: covered[task][1] for task in done}
    run_id = new_run_id()
    hashes = {c.task_id: get_task_props(store, c.task_id).get("content_hash")
              for c in plan.conversations}
    run = {"run_key": run_key(namespace, run_id), "namespace": namespace, "run_id": run_id,
           "created": int(time.time() * 1000), "status": RunStatus.WRITING.value,
           "faults": faults, "plan": plan.model_dump(mode="json"), "conversations": outcomes,
           "hashes": hashes}
    _save(store, run, RunStatus.WRITING, outcomes)
    return run


Covered = dict[str, tuple[set[str], dict[str, Any], ConversationPlan]]


def _covered(runs: list[dict[str, Any]]) -> Covered:
    """The conversations finished runs repaired: per task, the nodes that reached it (its
    seeds), its outcome, and its plan in that run (the latest run's, for a task in several)."""
    found: Covered = {}
    for run in runs:
        plan = NamespacePlan.model_validate(run["plan"])
        for c in plan.conversations:
            outcome = run["conversations"].get(c.task_id)
            if outcome is not None and outcome["status"] in GOES_ON:
                found[c.task_id] = (_seed_ids(c), outcome, c)
    return found


def _seed_ids(conversation: ConversationPlan) -> set[str]:
    return {link.memory_id for link in conversation.reached_by}


def _as_left(conversation: ConversationPlan, covered: Covered) -> ConversationPlan:
    """A conversation a follow-up run repairs, with each record it read from a conversation
    an earlier run repaired as that run's plan left it (the plan made now reads that
    conversation repaired: a record its repair removed is no longer active there)."""
    links, faults = [], list(conversation.plan.delete_memory_ids)
    by_memory = {i.memory_id: i for i in conversation.plan.inherited}
    for link in conversation.reached_by:
        earlier = covered.get(link.from_task or "")
        if earlier is not None and link.from_memory is not None and link.reach != "fault":
            old = earlier[2].plan
            if link.from_memory in old.delete_memory_ids:
                link = link.model_copy(update={"reach": "fault"})
                faults.append(link.memory_id)
                by_memory.pop(link.memory_id, None)
            elif link.from_memory in old.quarantine_memory_ids:
                link = link.model_copy(update={"reach": "removed"})
                if link.memory_id in by_memory:
                    by_memory[link.memory_id] = by_memory[link.memory_id].model_copy(
                        update={"removed": True})
        links.append(link)
    plan = conversation.plan.model_copy(update={
        "delete_memory_ids": list(dict.fromkeys(faults)), "inherited": list(by_memory.values())})
    return conversation.model_copy(update={"reached_by": links, "plan": plan})


def _save(store: GraphStore, run: dict[str, Any], status: RunStatus,
          outcomes: dict[str, dict[str, Any]]) -> None:
    run["status"], run["conversations"] = status.value, outcomes
    store.run("merge_namespace_run", {"run_key": run["run_key"], "props": {
        "namespace": run["namespace"], "run_id": run["run_id"], "created": run["created"],
        "status": status.value, "faults_json": json.dumps(run["faults"]),
        "plan_json": json.dumps(run["plan"]),
        "conversations_json": json.dumps({"outcomes": outcomes, "hashes": run["hashes"]})}})


def _public(props: dict[str, Any]) -> dict[str, Any]:
    state = json.loads(props.get("conversations_json") or "{}")
    return {"run_key": props["run_key"], "namespace": props["namespace"],
            "run_id": props["run_id"], "created": props["created"], "status": props["status"],
            "faults": json.loads(props["faults_json"]), "plan": json.loads(props["plan_json"]),
            "conversations": state.get("outcomes", {}), "hashes": state.get("hashes", {})}


def _written_ids(outcomes: dict[str, dict[str, Any]]) -> set[str]:
    return {i for o in outcomes.values() for i in o.get("new_memory_ids", [])}


def _require_unchanged(store: GraphStore, task_id: str, planned: str | None) -> None:
    now = get_task_props(store, task_id).get("content_hash")
    if planned is not None and now is not None and now != planned:
        raise TaskConflict(f"task {task_id!r} was replaced since this namespace run planned it "
                           "(its content changed): the run's plan no longer describes it")


def _carried(store: GraphStore, conversation: ConversationPlan,
             plan: NamespacePlan) -> list[tuple[MemoryRecord, str]]:
    """The records this conversation read that an earlier conversation's plan removed, as
    that conversation's committed repair rewrote them (none if it wrote none)."""
    carried: list[tuple[MemoryRecord, str]] = []
    for link in conversation.reached_by:
        if link.from_task is None or link.reach == "affected" or link.from_memory is None:
            continue
        record = _rewritten(store, link.from_task, link.from_memory)
        if record is not None:
            carried.append((record, link.memory_id))
    return carried


def _rewritten(store: GraphStore, task_id: str, memory_id: str) -> MemoryRecord | None:
    """The active record a committed repair of `task_id` wrote in place of `memory_id`: the
    one that replaces it, else the latest version of its agent id a repair wrote."""
    props = [r["props"] for r in store.run("list_task_nodes", {"task_key": task_key(task_id)})
             if r["props"].get("kind") == "memory"]
    agent = next((agent_id(p) for p in props if p["id"] == memory_id), None)
    written = [p for p in props if p.get("origin_run") and visible_now(p)]
    found = [p for p in written if p.get("replaces") == memory_id] or \
        [p for p in written if agent_id(p) == agent]
    if not found:
        return None
    chosen = max(found, key=lambda p: (p["ts"], p["position"]))
    record = record_from_props({k: v for k, v in chosen.items() if k not in _REPAIR_ONLY})
    assert isinstance(record, MemoryRecord)
    return record


def _outcome(conversation: ConversationPlan, report: RepairReport,
             carried: list[tuple[MemoryRecord, str]]) -> ConversationOutcome:
    return ConversationOutcome(
        task_id=conversation.task_id, status=report.status, run_id=report.run_id,
        answer_given=conversation.answer, corrected_answer=report.answer,
        answer_affected=conversation.answer_affected, needs_human=report.needs_human,
        pending=list(report.pending), unresolved=dict(report.unresolved),
        carried=[r.record_id or r.memory_id for r, _ in carried],
        new_memory_ids=list(report.new_memory_ids),
        replayed_steps=int(report.counts.get("replayed_steps", 0)))


def _report(run: dict[str, Any], plan: NamespacePlan, outcomes: dict[str, dict[str, Any]],
            status: str) -> NamespaceReport:
    return NamespaceReport(
        namespace=run["namespace"], run_id=run["run_id"], status=status, faults=run["faults"],
        conversations=[ConversationOutcome(**outcomes[c.task_id]) for c in plan.conversations
                       if c.task_id in outcomes],
        plan=plan.model_dump(mode="json"))
