"""The call log: every tool call a repair issues, durable in the store before and after it is
sent, so no run of the task version ever sends a call twice (provenance/state/calls.py holds
the statuses and a call's identity).

Each replayed tool call goes through `Calls.issue`, which reads the log first:
  - a call with a result (DONE) is not sent again: its result is reused;
  - a call whose intent was committed but whose result never was (ISSUING: a crash, no
    answer) has an unknown outcome: a person decides (`CallPending`, "may have been
    issued"), unless sending it again is safe: a read-only or idempotent tool, or one that
    accepts an idempotency key (re-sent with the same key);
  - a call that was sent and failed (FAILED: the tool raised or answered an error; it may
    have acted) is not sent again;
  - a call a person approved (APPROVED: exactly this tool and these arguments at this step)
    is sent; an approval covers one sending (a call sent since, even one refused, needs a
    new decision); any other call of an irreversible or undeclared tool stops for a person
    (`CallPending`), listed with its arguments and its hash;
  - a step acts once: a call that is not read-only, at a step that already issued another
    call (sent, failed, unknown outcome; other than the undoing of the recorded call), stops
    for a person, who is shown both (a resume regenerated the step with other arguments);
  - otherwise the tool's class decides (repair/tools/registry.py): read-only and idempotent
    calls are sent, a compensable one after the recorded call's compensating call (logged
    the same way).
A side-effecting call is sent as: intent committed (ISSUING) → the call → result committed
(DONE, FAILED or REJECTED), with a checkpoint (provenance/checkpoints.py) at each boundary:
`before_intent`, `after_intent`, `after_call`, `after_result`. A read-only call has no
effect to protect: its result is logged with the run's write-back (`flush`).

A dry run reads the log and writes nothing; it does not send a side-effecting call to the
user's own implementation (an MCP server, a callable: it would act in the world unlogged),
only to the case's recorded environment or the domain pack, which act on nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from provrepair.provenance.checkpoints import checkpoint
from provrepair.provenance.errors import NothingToResume
from provrepair.provenance.keys import task_key
from provrepair.provenance.state.calls import (
    CallStatus,
    approved,
    call_id,
    canonical_args,
    has_result,
    idempotency_key,
    is_issued,
    outcome_unknown,
    skipped,
)
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.tools.base import (
    SideEffectRefused,
    ToolFailed,
    ToolNotSent,
    ToolOutcomeUnknown,
    ToolResult,
)
from provrepair.repair.tools.declared import SideEffect
from provrepair.repair.tools.registry import ToolRegistry

UNDECLARED = "undeclared"  # the class shown for a tool nobody declared (it is irreversible)
EARLIER_VERSION = "earlier_version"  # side_effects_by_run's key of the calls of dropped versions
APPROVAL = "approval"                # a pending call: it needs a person's approval
UNKNOWN_OUTCOME = "unknown_outcome"  # a pending call: it may have been sent already


@dataclass
class LoggedCall:
    """One `:ToolCall` of the log."""

    call_id: str
    step_id: str
    tool: str
    args: dict[str, Any]
    status: CallStatus
    side_effect: str = UNDECLARED
    run_id: str | None = None          # the run that sent it last (or showed it, pending)
    attempts: int = 0
    result: str | None = None
    result_status: str | None = None   # ok | error (the tool's own answer)
    facts: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    reason: str | None = None          # why a person is asked
    stopped_run: str | None = None     # the stop that showed it
    approved_run: str | None = None    # the resume whose person approved it
    approved_at: int | None = None     # epoch ms
    issued_at: int | None = None
    finished_at: int | None = None
    created: int | None = None
    earlier_run: str | None = None     # the run that sent it, of a version dropped since

    @property
    def from_earlier_version(self) -> bool:
        """Last sent by a repair of a task version dropped since (ingest --replace, delete:
        the queries set `earlier_run`), not by one of this version."""
        return self.earlier_run is not None and self.run_id == self.earlier_run

    @classmethod
    def from_props(cls, props: dict[str, Any]) -> LoggedCall:
        return cls(call_id=props["call_id"], step_id=props["step_id"], tool=props["tool"],
                   args=json.loads(props.get("args_json") or "{}"),
                   status=CallStatus(props["status"]),
                   side_effect=props.get("side_effect") or UNDECLARED,
                   run_id=props.get("run_id"), attempts=int(props.get("attempts") or 0),
                   result=props.get("result"), result_status=props.get("result_status"),
                   facts=json.loads(props.get("facts_json") or "[]"), error=props.get("error"),
                   reason=props.get("reason"), stopped_run=props.get("stopped_run"),
                   approved_run=props.get("approved_run"), approved_at=props.get("approved_at"),
                   issued_at=props.get("issued_at"), finished_at=props.get("finished_at"),
                   created=props.get("created"), earlier_run=props.get("earlier_run"))

    def props(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "call_id": self.call_id, "step_id": self.step_id, "tool": self.tool,
            "args_json": canonical_args(self.args), "status": self.status.value,
            "side_effect": self.side_effect, "attempts": self.attempts,
            "facts_json": json.dumps(self.facts)}
        optional = {"run_id": self.run_id, "result": self.result,
                    "result_status": self.result_status, "error": self.error,
                    "reason": self.reason, "stopped_run": self.stopped_run,
                    "approved_run": self.approved_run, "approved_at": self.approved_at,
                    "issued_at": self.issued_at, "finished_at": self.finished_at,
                    "earlier_run": self.earlier_run}
        out.update({k: v for k, v in optional.items() if v is not None})
        return out

    def public(self) -> dict[str, Any]:
        """As `history --json`, `pending --json` and a report show it."""
        return {"call_id": self.call_id, "step_id": self.step_id, "tool": self.tool,
                "args": self.args, "side_effect": self.side_effect, "status": self.status.value,
                "run_id": self.run_id, "attempts": self.attempts, "result": self.result,
                "result_status": self.result_status, "error": self.error,
                "issued_at": self.issued_at, "finished_at": self.finished_at,
                "approval": ({"run_id": self.approved_run, "at": self.approved_at}
                             if self.approved_run else None),
                "reason": self.reason, "stopped_run": self.stopped_run,
                "earlier_version": self.from_earlier_version}

    def as_result(self) -> ToolResult:
        return ToolResult(self.result or "", list(self.facts), self.result_status or "ok")


@dataclass(frozen=True)
class PendingCall:
    """A call a person must decide about: shown at a stop, with its arguments and hash."""

    step_id: str
    tool: str
    args: dict[str, Any]
    call_id: str
    side_effect: str
    reason: str
    kind: str = APPROVAL   # APPROVAL, or UNKNOWN_OUTCOME (it may have been sent)
    attempts: int = 0      # how often it was sent before this stop

    def to_json(self) -> dict[str, Any]:
        return {"step_id": self.step_id, "tool": self.tool, "args": self.args,
                "call_id": self.call_id, "side_effect": self.side_effect,
                "kind": self.kind, "reason": self.reason, "attempts": self.attempts}


class CallPending(SideEffectRefused):
    """This call needs a person: the repair stops before it (needs_human)."""

    def __init__(self, call: PendingCall):
        super().__init__(call.reason)
        self.call = call


def now_ms() -> int:
    return int(time.time() * 1000)


def read_calls(store: GraphStore, task_id: str) -> list[LoggedCall]:
    """The task version's call log, oldest first."""
    rows = store.run("list_tool_calls", {"task_key": task_key(task_id)})
    return [LoggedCall.from_props(row["props"]) for row in rows]


def issued_calls(store: GraphStore, task_id: str) -> list[LoggedCall]:
    """The calls that may have acted in the world (sent, with or without an answer)."""
    return [c for c in read_calls(store, task_id) if is_issued(c.status, c.attempts)]


def side_effects(store: GraphStore, task_id: str) -> list[LoggedCall]:
    """The issued calls of tools that are not read-only (what repairs did in the world), in
    the order they were sent."""
    return sorted((c for c in issued_calls(store, task_id)
                   if c.side_effect != SideEffect.READ_ONLY), key=lambda c: c.issued_at or 0)


def side_effects_by_run(runs: list[dict[str, Any]],
                        calls: list[LoggedCall]) -> dict[str, list[LoggedCall]]:
    """The side effects (issued calls of tools that are not read-only) under the run that sent
    each; a call sent by a repair of an earlier version of the task (dropped since) under
    EARLIER_VERSION; a call whose run never finished (it died) goes under the first run after
    it, the one that carried on (else the last run)."""
    known = {run["run_id"] for run in runs}
    order = sorted(runs, key=lambda run: run.get("created") or 0)
    out: dict[str, list[LoggedCall]] = {}
    for call in calls:
        if call.side_effect == SideEffect.READ_ONLY:
            continue
        if call.from_earlier_version and call.run_id not in known:
            out.setdefault(EARLIER_VERSION, []).append(call)
            continue
        owner = call.run_id if call.run_id in known else next(
            (run["run_id"] for run in order if (run.get("created") or 0) >= (call.issued_at or 0)),
            order[-1]["run_id"] if order else None)
        if owner is not None:
            out.setdefault(owner, []).append(call)
    return out


def write_calls(store: GraphStore, task_id: str, calls: list[LoggedCall]) -> None:
    key = task_key(task_id)
    rows = [{"call_key": f"{key}/call/{c.call_id}", "task_key": key,
             "created": c.created or now_ms(), "props": c.props()} for c in calls]
    if rows:
        store.run("merge_tool_calls", {"rows": rows})


class CallLog:
    """The log of one task version, read once; `write` commits a call at once, `defer`
    keeps it for the run's write-back (`flush`). Not `durable` (a dry run), or without a
    store, nothing is written."""

    def __init__(self, store: GraphStore | None, task_id: str, run_id: str, *,
                 durable: bool = True):
        self.task_id, self.run_id = task_id, run_id
        self.calls = {c.call_id: c for c in (read_calls(store, task_id) if store else [])}
        self.store = store if durable else None
        self.deferred: list[LoggedCall] = []

    def get(self, call: str) -> LoggedCall | None:
        return self.calls.get(call)

    def write(self, call: LoggedCall) -> None:
        self.calls[call.call_id] = call
        if self.store is not None:
            write_calls(self.store, self.task_id, [call])

    def defer(self, call: LoggedCall) -> None:
        self.calls[call.call_id] = call
        self.deferred.append(call)

    def flush(self, extra: Sequence[LoggedCall] = ()) -> None:
        """Write the deferred calls (and `extra`) in one statement."""
        if self.store is not None:
            write_calls(self.store, self.task_id, [*self.deferred, *extra])
        self.deferred = []

    def skipped_steps(self) -> set[str]:
        return {c.step_id for c in self.calls.values() if skipped(c.status)}


@dataclass
class Calls:
    """The gate every replayed tool call passes (module docstring)."""

    registry: ToolRegistry
    log: CallLog
    dry_run: bool = False
    sent: int = 0
    reused: int = 0
    seen: list[str] = field(default_factory=list)   # call ids this run issued or reused

    def issue(self, step_id: str, tool: str, args: dict[str, Any],
              recorded_args: dict[str, Any], recorded_tool: str | None = None, *,
              undoing: bool = False) -> ToolResult:
        """The result of the call `tool(args)` replaying `step_id` (`recorded_tool`,
        `recorded_args`: the recorded call, which a compensable call's replay undoes first
        with the recorded tool's compensating tool). Raises CallPending (a person must
        decide) or ToolUnavailable (the step is unresolved). `undoing`: this is that
        compensating call."""
        cls = self.registry.side_effect(tool)
        shown = cls.value if cls is not None else UNDECLARED
        cid = call_id(step_id, tool, args)
        logged = self.log.get(cid)
        if logged is not None and has_result(logged.status):
            self.reused += 1
            self.seen.append(cid)
            return logged.as_result()
        # sending it again cannot act twice: by its class, or by the key it accepts
        resend_safe = cls in (SideEffect.READ_ONLY, SideEffect.IDEMPOTENT) or \
            self.registry.idempotency_key(tool) is not None
        pending = PendingCall(step_id, tool, args, cid, shown,
                              self.registry.refusal(tool, step_id),
                              attempts=logged.attempts if logged is not None else 0)
        if logged is not None and outcome_unknown(logged.status) and not resend_safe:
            raise CallPending(_unknown(pending, logged.run_id))
        if logged is not None and logged.status is CallStatus.FAILED and not resend_safe:
            self.reused += 1
            self.seen.append(cid)
            raise ToolFailed(f"{logged.error} (run {logged.run_id}; not sent again: it may "
                             "have had an effect)")
        # an approval covers one sending of the call shown: a call sent and refused since
        # (REJECTED) needs a new decision, as does one whose outcome a person has not seen
        is_approved = logged is not None and approved(logged.status)
        compensate = self.registry.compensation(recorded_tool or tool) \
            if cls is SideEffect.COMPENSABLE else None
        undo = (compensate, recorded_args) if compensate is not None else None
        if cls is not SideEffect.READ_ONLY and not is_approved and not undoing:
            _no_other_call_sent(pending, self.log, undo)
        allowed = cls in (SideEffect.READ_ONLY, SideEffect.IDEMPOTENT) or is_approved or (
            logged is not None and outcome_unknown(logged.status))
        if not allowed:
            if cls is not SideEffect.COMPENSABLE:
                raise CallPending(pending)
            if compensate is not None:  # undo the recorded call before its replacement
                self.issue(step_id, compensate, dict(recorded_args), recorded_args,
                           undoing=True)
        try:
            return self._send(pending, logged)
        except ToolOutcomeUnknown as exc:
            if resend_safe:
                raise
            raise CallPending(_unknown(pending, self.log.run_id, str(exc))) from exc

    def _send(self, pending: PendingCall, logged: LoggedCall | None) -> ToolResult:
        tool, args, cid = pending.tool, pending.args, pending.call_id
        self.registry.prepare(tool, args)  # NoImplementation: nothing logged, nothing sent
        read_only = pending.side_effect == SideEffect.READ_ONLY
        if self.dry_run and not read_only and self.registry.acts_in_world(tool):
            raise ToolNotSent(f"{tool} has side effects: a dry run does not send it")
        # the key goes to the user's own implementation (the one that declared it takes it)
        keyed = self.registry.idempotency_key(tool) if self.registry.acts_in_world(tool) \
            else None
        sent = {**args, keyed: idempotency_key(task_key(self.log.task_id), cid)} \
            if keyed else args
        before = logged or LoggedCall(cid, pending.step_id, tool, args, CallStatus.ISSUING)
        call = LoggedCall(**{**before.__dict__, "status": CallStatus.ISSUING,
                             "side_effect": pending.side_effect, "run_id": self.log.run_id,
                             "attempts": before.attempts + 1, "issued_at": now_ms(),
                             "error": None})
        self.seen.append(cid)
        if read_only:  # nothing to protect: logged with the run's write-back
            return self._answer(call, sent, durable=False)
        checkpoint("before_intent")
        self.log.write(call)
        checkpoint("after_intent")
        return self._answer(call, sent, durable=True)

    def _answer(self, call: LoggedCall, sent: dict[str, Any], *, durable: bool) -> ToolResult:
        """Send the call and record how it ended (at once when `durable`)."""
        record = self.log.write if durable else self.log.defer
        self.sent += 1
        try:
            result = self.registry.call(call.tool, sent)
        except ToolNotSent as exc:  # not a sending: not counted
            call.attempts -= 1
            record(_ended(call, CallStatus.REJECTED, error=str(exc)))
            raise
        except ToolOutcomeUnknown as exc:  # stays ISSUING: a later run sees an unknown outcome
            call.error = str(exc)
            record(call)
            raise
        except ToolFailed as exc:
            record(_ended(call, CallStatus.FAILED, error=str(exc)))
            raise
        if durable:
            checkpoint("after_call")
        record(_ended(call, CallStatus.DONE, result=result))
        if durable:
            checkpoint("after_result")
        return result


def record_stop(log: CallLog, run_id: str, pending: list[PendingCall]) -> None:
    """The run's write-back of its log: the read-only calls' answers, and at a stop the calls
    it shows (PENDING; one that may have been sent keeps its state, with the stop's reason)."""
    shown = []
    for call in pending:
        logged = log.get(call.call_id)
        base = logged or LoggedCall(call.call_id, call.step_id, call.tool, call.args,
                                    CallStatus.PENDING, call.side_effect)
        status = base.status if call.kind == UNKNOWN_OUTCOME else CallStatus.PENDING
        shown.append(LoggedCall(**{**base.__dict__, "status": status, "reason": call.reason,
                                   "stopped_run": run_id,
                                   "run_id": base.run_id or run_id}))
    log.flush(shown)


def record_decisions(store: GraphStore, task_id: str, run_id: str, stop: dict[str, Any],
                     approve: frozenset[str], skip: frozenset[str]) -> None:
    """A person's decisions about the calls a stop showed (its report, `stop`), bound to
    those calls: `STEP` (or `STEP:HASH`, checked against the call's hash) approves or skips
    every call shown at that step. Committed before the resumed replay, so they hold for
    every later resume too. A step the stop does not wait on is refused, naming those it
    does. A decision is about the call as the stop showed it: a call sent since (by a resume
    that died; the same command run again) keeps what that attempt left, never sent again on
    the strength of the old decision."""
    waiting = stop.get("pending") or []
    if not waiting and stop.get("needs_human"):  # a stop recorded before calls were listed:
        waiting = [{"step_id": stop["needs_human"]["step_id"]}]  # the replay shows its call
    at_step: dict[str, list[dict[str, Any]]] = {}
    for entry in waiting:
        at_step.setdefault(entry["step_id"], []).append(entry)
    both = {v.split(":", 1)[0] for v in approve} & {v.split(":", 1)[0] for v in skip}
    if both:
        raise NothingToResume(f"task {task_id!r}: step {sorted(both)[0]!r} is both approved "
                              "and skipped")
    logged = {c.call_id: c for c in read_calls(store, task_id)}
    decided = []
    for value, status in [*((v, CallStatus.APPROVED) for v in sorted(approve)),
                          *((v, CallStatus.SKIPPED) for v in sorted(skip))]:
        step, _, wanted = value.partition(":")
        if step not in at_step:
            raise NothingToResume(
                f"task {task_id!r}: step {step!r} is not one the stopped repair waits on "
                f"(it waits on {', '.join(sorted(at_step)) or 'no step'}; `provrepair pending "
                f"--task {task_id}` lists them)")
        for entry in at_step[step]:
            if "call_id" not in entry:
                continue
            if wanted and not entry["call_id"].startswith(wanted.removeprefix("#")):
                raise NothingToResume(
                    f"task {task_id!r}: the call the stop showed at step {step!r} is "
                    f"#{entry['call_id']}, not #{wanted.removeprefix('#')}")
            base = logged.get(entry["call_id"]) or LoggedCall(
                entry["call_id"], step, entry["tool"], entry["args"], CallStatus.PENDING,
                entry.get("side_effect") or UNDECLARED)
            if base.attempts > int(entry.get("attempts") or 0):
                continue  # sent since the stop showed it
            decided.append(LoggedCall(**{
                **base.__dict__, "status": status,
                "approved_run": run_id if status is CallStatus.APPROVED else base.approved_run,
                "approved_at": now_ms() if status is CallStatus.APPROVED else base.approved_at}))
    write_calls(store, task_id, decided)


def _no_other_call_sent(pending: PendingCall, log: CallLog,
                        undo: tuple[str, dict[str, Any]] | None) -> None:
    """A step acts once: before a call that is not read-only is sent, the calls already
    issued at its step (sent, failed or of unknown outcome) other than itself and the undoing
    of the recorded call (`undo`: compensating tool, arguments). One that exists (a resume
    regenerated the step with other arguments) stops for a person, who sees both."""
    earlier = [c for c in log.calls.values()
               if c.step_id == pending.step_id and c.call_id != pending.call_id
               and is_issued(c.status, c.attempts) and c.side_effect != SideEffect.READ_ONLY
               and (undo is None or (c.tool, c.args) != (undo[0], undo[1]))]
    if not earlier:
        return
    sent = "; ".join(f"{c.tool} {canonical_args(c.args)} #{c.call_id} ({c.status.value}, run "
                     f"{c.run_id})" for c in earlier)
    raise CallPending(PendingCall(
        pending.step_id, pending.tool, pending.args, pending.call_id, pending.side_effect,
        f"step {pending.step_id!r} already sent a different call: {sent}; the replay now "
        f"issues {pending.tool} {canonical_args(pending.args)} #{pending.call_id}: --approve "
        "sends it as well (check the earlier one first), --skip leaves the step unresolved",
        APPROVAL, pending.attempts))


def _unknown(pending: PendingCall, run_id: str | None, why: str = "") -> PendingCall:
    """The call as pending because it may have been sent."""
    cause = f"run {run_id} sent it" + (f" and got no answer ({why})" if why else
                                         " and recorded no result")
    return PendingCall(pending.step_id, pending.tool, pending.args, pending.call_id,
                       pending.side_effect,
                       f"step {pending.step_id!r}: {pending.tool} may have been issued ({cause}):"
                       " check whether it took effect; --approve sends it again, --skip "
                       "leaves the step unresolved", UNKNOWN_OUTCOME,
                       pending.attempts + (1 if why else 0))


def _ended(call: LoggedCall, status: CallStatus, *, error: str | None = None,
           result: ToolResult | None = None) -> LoggedCall:
    call.status, call.finished_at, call.error = status, now_ms(), error
    if result is not None:
        call.result, call.result_status, call.facts = result.result, result.status, result.facts
    return call
