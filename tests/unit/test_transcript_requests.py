"""Transcripts that say what each request carried (`requests`) and what a memory write stores
(`evidence`), loaders/openai_messages.py; README "Dependencies". Without them the
conservative reading (everything earlier) stays; malformed ones are one CaseError naming
task, field and index."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from provrepair.benchmark.reference import plan_in_memory
from provrepair.loaders.openai_messages import transcript_case
from provrepair.provenance.errors import CaseError
from provrepair.provenance.models import Case

SYSTEM = {"role": "system", "content": "You remember: seat 4C"}
Q1 = {"role": "user", "content": "Which seat do I have?"}
A1 = {"role": "assistant", "content": "4C."}
Q2 = {"role": "user", "content": "And the meal?"}
CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "meal", "arguments": "{}"}}]}
RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "vegan"}
A2 = {"role": "assistant", "content": "A vegan meal."}

# turn 1 retrieves the seat, turn 2 asks a tool; the turn-2 requests do not re-send turn 1
BASE: dict[str, Any] = {
    "task_id": "t", "messages": [Q1, A1, Q2, CALL, RESULT, A2],
    "memory_events": [{"after": 0, "op": "search", "records": [
        {"id": "m_seat", "content": "seat 4C"}]}],
    "requests": [{"messages": [SYSTEM, Q1], "model": "gpt-x"},
                 {"messages": [Q2]},
                 {"messages": [Q2, CALL, RESULT]}]}


def read(transcript: dict[str, Any]) -> Case:
    return transcript_case(transcript, "t")


def affected(case: Case, fault: str) -> set[str]:
    """The contents of the affected steps other than the fault's own retrieval."""
    return {s.content for s in case.trace if s.step_id in
            set(plan_in_memory(case, [fault])["affected_ids"])
            and s.step_type != "memory_read"}


def conservative(transcript: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in transcript.items() if k != "requests"}


def test_an_output_depends_on_what_its_request_carried() -> None:
    case = read(BASE)
    steps = {s.content: s for s in case.trace}
    assert set(steps["4C."].used_ids) == {"u_001", "s_001", "m_seat"}  # s_001: the search
    assert steps["(tool calls)"].used_ids == ["u_002"]
    # the call's output, its action and result (the question through the output)
    assert steps["A vegan meal."].used_ids == ["s_003", "s_004", "s_005"]
    # the seat was put in turn 1's request only: turn 2 does not depend on it ...
    assert affected(case, "m_seat") == {"4C."}
    # ... whereas read conservatively everything earlier was shown to every later message
    assert affected(read(conservative(BASE)), "m_seat") >= {"4C.", "A vegan meal."}


def test_repeated_messages_are_matched_not_stored_again() -> None:
    history = copy.deepcopy(BASE)
    history["requests"][1:] = [{"messages": [SYSTEM, Q1, A1, Q2]},
                               {"messages": [Q1, A1, Q2, CALL, RESULT]}]
    case = read(history)
    assert [u.content for u in case.session] == [Q1["content"], Q2["content"]]
    assert [s.step_type for s in case.trace].count("tool_observation") == 1
    # re-sent, turn 1's answer carries the seat into turn 2
    assert affected(case, "m_seat") == {"4C.", "(tool calls)", "meal()", "vegan",
                                        "A vegan meal."}


def test_records_named_by_id_and_messages_only_a_request_shows() -> None:
    named = copy.deepcopy(BASE)
    named["requests"][2]["messages"].insert(0, {"role": "system", "content": [
        {"type": "text", "text": "profile", "memory_record_id": "m_diet"}]})
    named["requests"][1]["messages"].append({"role": "user", "content": "Quickly, please."})
    case = read(named)
    assert "m_diet" in case.trace[-1].used_ids  # a record the run never retrieved: a root
    assert [u.content for u in case.session][-1] == "Quickly, please."
    assert "u_003" in next(s for s in case.trace if s.content == "(tool calls)").used_ids


def test_a_search_since_the_previous_output_stays_in_the_context() -> None:
    """It may have been put into the request out of band: kept (over-approximate)."""
    late = copy.deepcopy(BASE)
    late["memory_events"].append({"after": 4, "op": "search", "records": [
        {"id": "m_meal", "content": "vegan"}]})
    assert "m_meal" in read(late).trace[-1].used_ids


def test_a_write_depends_on_what_it_names_else_on_the_latest_output() -> None:
    write = {"after": 5, "op": "create", "id": "m_new", "content": "seat 4C, vegan"}
    told = copy.deepcopy(BASE)
    told["memory_events"].append({**write, "evidence": ["messages[0]", "m_seat", "call_1"]})
    case = read(told)
    assert case.trace[-1].used_ids == ["u_001", "m_seat", "s_005"]
    untold = copy.deepcopy(BASE)
    untold["memory_events"].append(write)
    # the latest output, and what the stored text shows (the seat record, the tool result)
    assert read(untold).trace[-1].used_ids == ["s_006", "m_seat", "s_005"]


def test_a_request_log_alone_is_a_transcript() -> None:
    """Each call's messages and response, as a proxy logs them: the conversation is matched
    from the requests, nothing stored twice."""
    log = {"task_id": "t", "memory_events": [{"after": -1, "op": "search", "records": [
        {"id": "m_seat", "content": "seat 4C"}]}],
        "requests": [{"messages": [SYSTEM, Q1], "response": A1},
                     {"messages": [SYSTEM, Q1, A1, Q2], "response": CALL},
                     {"messages": [Q1, A1, Q2, CALL, RESULT], "response": A2}]}
    case = read(log)
    assert [u.content for u in case.session] == [Q1["content"], Q2["content"]]
    assert [s.step_type for s in case.trace] == [
        "memory_read", "final_answer", "plan", "tool_action", "tool_observation",
        "final_answer"]
    assert affected(case, "m_seat") == {"4C.", "(tool calls)", "meal()", "vegan",
                                        "A vegan meal."}
    log["requests"][1]["messages"] = [Q2]  # turn 2 not sent turn 1: the seat stays there
    log["requests"][2]["messages"] = [Q2, CALL, RESULT]
    assert affected(read(log), "m_seat") == {"4C."}
    log["requests"][1].pop("response")
    with pytest.raises(CaseError, match="needs each request's response") as caught:
        read(log)
    assert caught.value.field == "requests[1].response"


def bad(change: Any) -> dict[str, Any]:
    transcript = copy.deepcopy(BASE)
    change(transcript)
    return transcript


@pytest.mark.parametrize(("transcript", "field", "needle"), [
    (bad(lambda t: t.update(requests={"messages": []})), "requests", "expected a list"),
    (bad(lambda t: t["requests"].pop()), "requests", "2 request(s) for 3 assistant"),
    (bad(lambda t: t["requests"][1].pop("messages")), "requests[1].messages",
     "the `messages` it sent"),
    (bad(lambda t: t["requests"][2]["messages"].append({"role": "robot"})),
     "requests[2].messages[3].role", "unknown role"),
    (bad(lambda t: t["requests"][2]["messages"].append("hi")), "requests[2].messages[3]",
     "an object with a role"),
    (bad(lambda t: t["requests"][2]["messages"][2].pop("tool_call_id")),
     "requests[2].messages[2].tool_call_id", "needs one"),
    (bad(lambda t: t["requests"][2]["messages"].__setitem__(1, {
        "role": "assistant", "tool_calls": [{"function": {"name": "meal"}}]})),
     "requests[2].messages[1].tool_calls[0].id", "needs its id"),
    (bad(lambda t: t["requests"][2]["messages"].__setitem__(1, {
        "role": "assistant", "tool_calls": "meal"})),
     "requests[2].messages[1].tool_calls", "expected a list"),
    (bad(lambda t: t["requests"][0]["messages"].append({"role": "system", "content": [
        {"type": "text", "text": "x", "memory_record_id": 7}]})),
     "requests[0].messages[2].content[0].memory_record_id", "a record id"),
    (bad(lambda t: t["requests"][0]["messages"].append({"role": "user", "content": [
        {"type": "tool_result"}]})), "requests[0].messages[2].content", "Anthropic-style"),
    (bad(lambda t: t["memory_events"].append({"after": 5, "op": "create", "id": "m",
                                              "evidence": {"a": 1}})),
     "memory_events[1].evidence", "an id or a list"),
    (bad(lambda t: t["memory_events"].append({"after": 5, "op": "create", "id": "m",
                                              "evidence": ["nothing"]})),
     "evidence", "names nothing"),
    (bad(lambda t: t["memory_events"].append({"after": "x", "op": "search"})),
     "memory_events[1].after", "a message index"),
])
def test_malformed_requests_are_one_line_naming_task_field_and_index(
        transcript: dict[str, Any], field: str, needle: str) -> None:
    with pytest.raises(CaseError) as caught:
        read(transcript)
    assert caught.value.task_id == "t" and caught.value.field == field
    assert needle in caught.value.problem and "\n" not in str(caught.value)
