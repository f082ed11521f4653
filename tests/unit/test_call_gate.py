"""The gate every replayed tool call passes (repair/tools/calllog.py) and a call's identity
(provenance/state/calls.py), with a log held in memory (no server): what is sent, what is
reused, what waits for a person. The same log in the store, and kill -9 at each point of the
protocol: tests/integration/test_call_log.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.checkpoints import install
from provrepair.provenance.state.calls import CallStatus, call_id, canonical_args
from provrepair.provenance.vocab import CALL_PROPERTIES
from provrepair.repair.derive import Context
from provrepair.repair.reasoners.base import StepRequest
from provrepair.repair.reasoners.prompts import MAX_TEXT, bounded, messages
from provrepair.repair.tools.base import ToolFailed, ToolNotSent
from provrepair.repair.tools.calllog import (
    UNKNOWN_OUTCOME,
    CallLog,
    CallPending,
    Calls,
    LoggedCall,
)
from provrepair.repair.tools.declared import ToolSet
from provrepair.repair.tools.packs import domain_tools
from provrepair.repair.tools.registry import ToolRegistry
from tests import side_effect_tools
from tests.helpers import example_case

ARGS = {"order_id": "ORD00200", "amount": "$120.00"}


def gate(tools: ToolSet = side_effect_tools.TOOLS, *logged: LoggedCall,
         dry_run: bool = False) -> Calls:
    log = CallLog(None, "t", "run-2")
    log.calls.update({c.call_id: c for c in logged})
    return Calls(ToolRegistry([], {}, domain_tools("travel"), declared=tools), log, dry_run)


def logged(status: CallStatus, args: dict[str, Any] = ARGS, **more: Any) -> LoggedCall:
    return LoggedCall(call_id("s_003", "issue_refund", args), "s_003", "issue_refund", args,
                      status, "irreversible", run_id="run-1", **more)


def test_a_call_is_named_by_its_step_tool_and_canonical_arguments() -> None:
    assert canonical_args({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    same = call_id("s_003", "issue_refund", {"amount": "$120.00", "order_id": "ORD00200"})
    assert same == call_id("s_003", "issue_refund", ARGS) and len(same) == 12
    assert call_id("s_003", "issue_refund", {**ARGS, "amount": "$121.00"}) != same
    assert call_id("s_004", "issue_refund", ARGS) != same
    assert call_id("s_003", "send_email", ARGS) != same


def test_an_irreversible_call_waits_for_a_person_and_nothing_is_sent(effects: Path) -> None:
    calls = gate()
    with pytest.raises(CallPending) as stop:
        calls.issue("s_003", "issue_refund", ARGS, ARGS)
    assert stop.value.call.to_json() == {
        "step_id": "s_003", "tool": "issue_refund", "args": ARGS,
        "call_id": call_id("s_003", "issue_refund", ARGS), "side_effect": "irreversible",
        "kind": "approval", "attempts": 0, "reason": stop.value.call.reason}
    assert "neither idempotent nor compensable" in stop.value.call.reason
    assert not effects.exists() and calls.sent == 0


def test_an_approved_call_is_sent_once_and_its_result_reused(effects: Path) -> None:
    seen: list[str] = []
    install(type("Seen", (), {"reached": lambda self, name: seen.append(name)})())
    try:
        calls = gate(side_effect_tools.TOOLS, logged(CallStatus.APPROVED, approved_run="run-2"))
        first = calls.issue("s_003", "issue_refund", ARGS, ARGS)
        again = calls.issue("s_003", "issue_refund", ARGS, ARGS)
    finally:
        install(None)
    assert first == again and first.result == "Refunded $120.00 for ORD00200 (R-1)"
    assert len(side_effect_tools.made(effects)) == 1 and (calls.sent, calls.reused) == (1, 1)
    assert seen == ["before_intent", "after_intent", "after_call", "after_result"]
    done = calls.log.get(call_id("s_003", "issue_refund", ARGS))
    assert done is not None and done.status is CallStatus.DONE and done.attempts == 1
    assert done.approved_run == "run-2" and done.result == first.result


def test_an_approval_lets_through_no_other_call_at_that_step(effects: Path) -> None:
    calls = gate(side_effect_tools.TOOLS, logged(CallStatus.APPROVED, approved_run="run-2"))
    other = {**ARGS, "amount": "$999.00"}
    with pytest.raises(CallPending) as stop:
        calls.issue("s_003", "issue_refund", other, ARGS)
    assert stop.value.call.call_id == call_id("s_003", "issue_refund", other)
    assert stop.value.call.args == other and not effects.exists()


@pytest.mark.parametrize("tools, resent", [(side_effect_tools.TOOLS, False),
                                           (side_effect_tools.KEYED, True)])
def test_an_intent_without_a_result_is_an_unknown_outcome(
        effects: Path, tools: ToolSet, resent: bool) -> None:
    """Irreversible: a person decides ("may have been issued"). With an idempotency key the
    tool accepts: sent again, with the same key every time, so the tool acts once."""
    if resent:  # the first attempt reached the tool before the crash
        first = gate(tools, logged(CallStatus.APPROVED, approved_run="run-1"))
        first.issue("s_003", "issue_refund", ARGS, ARGS)
        sent_before = first.log.get(call_id("s_003", "issue_refund", ARGS))
        assert sent_before is not None
        crashed = LoggedCall(**{**sent_before.__dict__, "status": CallStatus.ISSUING})
    else:
        crashed = logged(CallStatus.ISSUING, attempts=1)
    calls = gate(tools, crashed)
    if not resent:
        with pytest.raises(CallPending) as stop:
            calls.issue("s_003", "issue_refund", ARGS, ARGS)
        assert stop.value.call.kind == UNKNOWN_OUTCOME and stop.value.call.attempts == 1
        assert "may have been issued (run run-1 sent it" in stop.value.call.reason
        assert not effects.exists()
        return
    assert calls.issue("s_003", "issue_refund", ARGS, ARGS).result.endswith("(R-1)")
    made = side_effect_tools.made(effects)
    assert len(made) == 1 and made[0]["request_id"].startswith("provrepair-")
    done = calls.log.get(call_id("s_003", "issue_refund", ARGS))
    assert done is not None and done.attempts == 2 and done.status is CallStatus.DONE


def test_a_failed_side_effect_is_not_sent_again(effects: Path) -> None:
    calls = gate(side_effect_tools.TOOLS,
                 logged(CallStatus.FAILED, error="issue_refund failed: TimeoutError"))
    with pytest.raises(ToolFailed, match="not sent again: it may have had an effect"):
        calls.issue("s_003", "issue_refund", ARGS, ARGS)
    assert not effects.exists() and calls.sent == 0


def test_read_only_calls_are_logged_with_the_write_back(effects: Path) -> None:
    prices = ToolSet().add(lambda store: f"{store}: $68.50", "read_only", name="get_price")
    calls = gate(prices)
    assert calls.issue("s_002", "get_price", {"store": "StoreA"}, {}).result == "StoreA: $68.50"
    assert [(c.tool, c.status) for c in calls.log.deferred] == [("get_price", CallStatus.DONE)]


def test_a_dry_run_sends_no_side_effect_into_the_world(effects: Path) -> None:
    """The user's own implementation is not called; the domain pack's simulation is (it acts
    on nothing): the travel pack's compensable booking runs its cancellation first."""
    calls = gate(side_effect_tools.TOOLS, logged(CallStatus.APPROVED, approved_run="run-2"),
                 dry_run=True)
    with pytest.raises(ToolNotSent, match="a dry run does not send it"):
        calls.issue("s_003", "issue_refund", ARGS, ARGS)
    booked = calls.issue("s_005", "book_flight", {"flight_id": "F1"}, {"flight_id": "F0"})
    assert booked.status == "error" and not effects.exists()  # no flight F1 in this world
    assert [c.tool for c in calls.log.calls.values()] == ["issue_refund", "cancel_booking",
                                                         "book_flight"]
    assert calls.log.store is None


def test_long_texts_are_cut_in_prompts_with_a_marker() -> None:
    """A 1 MB tool result in the context of a request: cut, with a marker; the step itself
    (what the store holds) stays whole."""
    case = example_case()
    huge = case.trace[3].model_copy(update={"content": "x" * (1 << 20)})
    request = StepRequest(step=case.trace[-1], domain=case.domain, context=Context([]),
                          inputs=case.session, memories=case.memory_store, steps=[huge])
    context = json.loads(messages(request, "content")[-1]["content"])
    shown = context["steps"][0]["content"]
    assert shown.startswith("x" * MAX_TEXT) and len(shown) < MAX_TEXT + 80
    assert shown.endswith("[… cut: 1,044,576 of 1,048,576 characters left out]")
    assert len(huge.content) == 1 << 20
    assert bounded("short") == "short" and bounded(None) is None


def test_an_approval_covers_one_sending(effects: Path) -> None:
    """A call a person approved that was sent and refused (REJECTED) needs a new decision."""
    calls = gate(side_effect_tools.TOOLS, logged(CallStatus.REJECTED, approved_run="run-1",
                                                 attempts=1))
    with pytest.raises(CallPending):
        calls.issue("s_003", "issue_refund", ARGS, ARGS)
    assert not effects.exists() and calls.sent == 0


def test_the_vocabulary_names_every_property_the_log_writes() -> None:
    full = logged(CallStatus.DONE, result="x", result_status="ok", error="e",
                  reason="why", stopped_run="s", approved_run="a", approved_at=1, issued_at=2,
                  finished_at=3, earlier_run="r")
    assert {*full.props(), "call_key", "created"} == set(CALL_PROPERTIES)
