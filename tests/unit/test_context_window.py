"""The context-window reading of traces and transcripts (loaders/agent_run.py, otel.py,
openai_messages.py; README "Dependencies"), and what the conventions allow, without a
server: each case is read and its steps' dependencies checked."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from provrepair.benchmark.reference import plan_in_memory
from provrepair.loaders.agent_run import SOURCES, WARNINGS
from provrepair.loaders.openai_messages import transcript_case
from provrepair.loaders.otel import Span, cases_from_spans, otlp_spans
from provrepair.loaders.otlp_json import any_value_json
from provrepair.provenance.errors import CaseError, UserError
from provrepair.provenance.models import Case, ExecutionStep

TRACE = "ab" * 16


def span(n: int, op: str, *, parent: int | None = None, links: tuple[int, ...] = (),
         error: str | None = None, **attrs: Any) -> Span:
    return Span(TRACE, f"{n:016x}", 1000 * n, {"gen_ai.operation.name": op, **attrs},
                error=error is not None, parent_id=f"{parent:016x}" if parent else None,
                links=tuple(f"{x:016x}" for x in links), error_text=error or "")


def text(role: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content, **extra}]}


def chat(n: int, inputs: list[dict[str, Any]] | None, answer: str = "",
         calls: list[dict[str, Any]] | None = None, **attrs: Any) -> Span:
    parts = ([{"type": "text", "content": answer}] if answer else []) + (calls or [])
    if inputs is not None:
        attrs["gen_ai.input.messages"] = json.dumps(inputs)
    return span(n, "chat", **{"gen_ai.output.messages": json.dumps(
        [{"role": "assistant", "parts": parts}]), **attrs})


def search(n: int, *records: tuple[str, str]) -> Span:
    return span(n, "search_memory", **{"gen_ai.memory.records": json.dumps(
        [{"id": i, "content": c} for i, c in records])})


def write(n: int, op: str, *records: dict[str, Any], **kw: Any) -> Span:
    return span(n, op, **{"gen_ai.memory.records": json.dumps(list(records))}, **kw)


def read(*spans: Span) -> Case:
    (case,) = cases_from_spans(list(spans))
    return case


def step(case: Case, content: str) -> ExecutionStep:
    return next(s for s in case.trace if s.content == content)


Q1, Q2 = text("user", "Which seat do I have?"), text("user", "And the meal?")


def test_an_output_depends_on_what_its_input_carried_and_nothing_else() -> None:
    case = read(search(1, ("m_seat", "seat 4C"), ("m_meal", "vegan meal")),
                chat(2, [text("system", "You remember: seat 4C"), Q1], "4C"),
                search(3, ("m_bag", "one bag")),
                chat(4, [Q2], "vegan", **{}),
                chat(5, [text("system", "x", memory_record_id="m_meal"), Q2], "Vegan."))
    first, second, third = step(case, "4C"), step(case, "vegan"), step(case, "Vegan.")
    # the search right before an output is its retrieval; a record shown by content counts
    assert {"u_001", "m_seat", "m_meal"} <= set(first.used_ids)
    assert "m_bag" in second.used_ids and "m_seat" not in second.used_ids
    assert "u_001" not in second.used_ids  # not re-sent: not in its context
    assert "m_meal" in third.used_ids and "m_bag" not in third.used_ids  # named by id


def test_a_re_sent_history_names_the_same_user_turn_and_a_repeat_is_a_new_turn() -> None:
    yes = text("user", "yes")
    case = read(chat(1, [Q1, yes], "ok"),
                chat(2, [Q1, yes, text("assistant", "ok"), Q2, yes], "done"))
    assert [u.content for u in case.session] == ["Which seat do I have?", "yes",
                                                 "And the meal?", "yes"]
    assert step(case, "done").turn == 4


def test_a_record_the_run_wrote_and_shows_later_is_a_dependency() -> None:
    case = read(chat(1, [Q1], "seat 4C"),
                write(2, "create_memory", {"id": "m_seat", "content": "Seat is 4C"}, parent=1),
                chat(3, [text("system", "Notes: Seat is 4C."), Q2], "noted"))
    assert step(case, "Seat is 4C").used_ids == ["s_001"]  # its parent: the output it stores
    assert "m_seat" in step(case, "noted").used_ids


def test_a_write_depends_on_its_links_and_on_the_latest_output() -> None:
    call = {"type": "tool_call", "id": "c1", "name": "seat", "arguments": {}}
    case = read(chat(1, [Q1], calls=[call]),
                span(2, "execute_tool", **{"gen_ai.tool.call.id": "c1",
                                           "gen_ai.tool.call.result": "4C"}),
                chat(3, [Q1], "Your seat is 4C."),
                write(4, "create_memory", {"id": "m1", "content": "seat 4C"}, links=(2,)),
                write(5, "create_memory", {"id": "m2", "content": "asked about seats"}))
    observation = step(case, "4C")
    assert observation.step_type == "tool_observation"
    answer = step(case, "Your seat is 4C.").step_id
    # the linked span, and (a link adds dependencies, never narrows them) the latest output
    assert step(case, "seat 4C").used_ids == [observation.step_id, answer]
    # no parent step, no link: the latest output and what arrived since (the record m1)
    assert step(case, "asked about seats").used_ids == [answer, "m1"]


def test_input_not_captured_falls_back_to_everything_earlier_and_says_so() -> None:
    case = read(search(1, ("m1", "seat 4C")), chat(2, [Q1], "4C"), chat(3, None, "bye"))
    assert set(step(case, "bye").used_ids) >= {"s_002"}
    assert "everything earlier" in case.world[WARNINGS][0]
    assert case.world[WARNINGS][0].count(f"{3:016x}") == 1


def test_unknown_operations_are_generic_steps_in_order() -> None:
    case = read(chat(1, [Q1], "thinking"),
                span(2, "plan", **{"gen_ai.output.messages": json.dumps(
                    [text("assistant", "check seat map")])}),
                chat(3, [Q1, text("assistant", "check seat map")], "4C"))
    generic = step(case, "plan: check seat map")
    assert generic.step_type == "plan" and [s.step_id for s in case.trace].index(
        generic.step_id) == 1
    assert generic.step_id in step(case, "4C").used_ids
    assert case.world[SOURCES][generic.step_id] == f"{2:016x}"


def test_several_records_supersedes_and_derived_from() -> None:
    case = read(search(1, ("a", "seat 4C"), ("b", "seat 5D")),
                chat(2, [Q1], "merging"),
                write(3, "update_memory",
                      {"id": "c", "content": "seat 4C (confirmed)",
                       "metadata": {"supersedes": ["a", "b"], "derived_from": ["a", "b"]}},
                      {"id": "d", "content": "meal vegan"}))
    merged = next(m for m in case.memory_store if m.memory_id == "c")
    assert merged.supersedes == "a" and merged.derived_from == ["a", "b"]
    assert {m.memory_id: m.status for m in case.memory_store}["b"] == "superseded"
    # one operation, one step, whatever the number of records (issue 36)
    consolidate = step(case, "seat 4C (confirmed) meal vegan")
    assert consolidate.step_type == "memory_consolidate"
    # d, updated without a lineage, existed before the run: its new version
    assert consolidate.invalidated_memory_ids == ["a", "b", "d"]
    assert consolidate.generated_memory_ids == ["c", "d~2"]


def test_structured_results_are_exact_json_and_failures_keep_their_text() -> None:
    call = {"type": "tool_call", "id": "c1", "name": "seat", "arguments": {"row": 4}}
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": TRACE, "spanId": f"{1:016x}", "startTimeUnixNano": "1000", "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps([Q1])}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
                [{"role": "assistant", "parts": [call]}])}}]},
        {"traceId": TRACE, "spanId": f"{2:016x}", "startTimeUnixNano": "2000",
         "status": {"code": 2, "message": "seat map offline"}, "attributes": [
             {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
             {"key": "gen_ai.tool.call.id", "value": {"stringValue": "c1"}},
             {"key": "gen_ai.tool.call.result", "value": {"kvlistValue": {"values": [
                 {"key": "z", "value": {"intValue": "1"}},
                 {"key": "a", "value": {"stringValue": "é"}}]}}}]}]}]}]}
    (case,) = cases_from_spans(otlp_spans(doc, "t"))
    observation = case.trace[-1]
    assert observation.status == "error"
    assert observation.content == '{"z": 1, "a": "é"} error: seat map offline'


def test_tool_calls_without_ids_and_arguments_as_objects() -> None:
    call = {"type": "tool_call", "name": "seat", "arguments": {"row": 4}}
    case = read(chat(1, [Q1], calls=[call]),
                span(2, "execute_tool", **{"gen_ai.tool.name": "seat",
                                           "gen_ai.tool.call.result": "4C"}))
    action, observation = case.trace[1], case.trace[2]
    assert action.tool_args == {"row": 4} and observation.used_ids == [action.step_id]
    with pytest.raises(CaseError, match="no unanswered call"):
        read(span(1, "execute_tool", **{"gen_ai.tool.name": "seat"}))


def test_a_record_mutated_since_the_previous_output_stays_a_direct_dependency() -> None:
    """A failed delete seeds its fault at the delete; reach enters nothing older, so the
    later output must name the record itself, not only the earlier output that saw it."""
    history = [text("system", "You remember: seat 4C"), Q1]
    case = read(search(1, ("m_seat", "seat 4C")), chat(2, history, "4C"),
                span(3, "delete_memory", error="store down", **{"gen_ai.memory.record.id":
                                                                 "m_seat"}),
                chat(4, [*history, text("assistant", "4C"), Q2], "still 4C"))
    later = step(case, "still 4C")
    assert later.used_ids[0] == step(case, "4C").step_id and "m_seat" in later.used_ids
    assert later.step_id in plan_in_memory(case, ["m_seat"])["affected_ids"]


def test_an_output_re_sending_the_history_names_the_previous_output_and_what_is_new() -> None:
    case = read(chat(1, [Q1], "4C"), chat(2, [Q1, text("assistant", "4C"), Q2], "vegan"))
    assert step(case, "vegan").used_ids == ["s_001", "u_002"]


@pytest.mark.parametrize(("messages", "needle"), [
    ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x"}]}],
     "Anthropic-style"),
    ([{"role": "user", "content": {"text": "hi"}}], "a string or a list of content parts"),
    ([{"role": "tool", "content": "4C"}], "a tool message needs one"),
    (["hello"], "a message is an object"),
])
def test_transcripts_in_other_shapes_are_refused(messages: list[Any], needle: str) -> None:
    with pytest.raises(CaseError, match=needle):
        transcript_case({"task_id": "t", "messages": messages}, "t")


def test_transcript_tool_call_without_id_and_object_arguments() -> None:
    case = transcript_case({"task_id": "t", "messages": [
        {"role": "user", "content": "seat?"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"type": "function", "function": {"name": "seat",
                                                          "arguments": {"row": 4}}}]},
        {"role": "tool", "content": "4C"},
        {"role": "assistant", "content": "4C"}]}, "t")
    assert [s.step_type for s in case.trace] == ["plan", "tool_action", "tool_observation",
                                                 "final_answer"]
    assert case.trace[1].tool_args == {"row": 4}
    assert case.trace[3].used_ids == ["s_001", "s_003"]


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "otel" / "shopping_agent.otlp.jsonl"
ODD_VALUES: list[Any] = [
    None, 1, "x", [], {}, [1], [{}], {"a": 1}, "[1]", '[{"role": 1}]', True, 1.5,
    '[{"id": {"a": 1}}]', '[{"role": "user", "parts": [1]}]',
    '[{"role": "user", "parts": [{"type": "tool_call_response", "id": null}]}]',
    '[{"id": "m", "metadata": {"supersedes": {"x": 1}}}]', '[{"id": "m", "metadata": "{bad"}]']


def test_odd_attribute_values_are_read_or_refused_never_a_traceback() -> None:
    spans = [s for line in EXAMPLE.read_text().splitlines()
             for r in json.loads(line)["resourceSpans"] for sc in r["scopeSpans"]
             for s in sc["spans"]]
    rng = random.Random(28)
    for _ in range(400):
        mutated = copy.deepcopy(spans)
        for _ in range(rng.randint(1, 3)):
            rng.choice(rng.choice(mutated)["attributes"])["value"] = any_value_json(
                rng.choice(ODD_VALUES))
        try:
            cases_from_spans(otlp_spans({"resourceSpans": [{"scopeSpans": [
                {"spans": mutated}]}]}, "fuzz"))
        except UserError as exc:
            assert "\n" not in str(exc)


def test_uncaptured_outputs_depend_on_everything_earlier_through_the_previous_one() -> None:
    case = read(search(1, ("m1", "seat 4C")), chat(2, None, "first"),
                search(3, ("m2", "meal vegan")), chat(4, None, "second"),
                span(5, "delete_memory", error="down", **{"gen_ai.memory.record.id": "m1"}),
                chat(6, None, "third"))
    first, second, third = (step(case, t) for t in ("first", "second", "third"))
    assert set(first.used_ids) == {"s_001", "m1"}
    assert second.used_ids == [first.step_id, "s_003", "m2"]
    # m1 was touched by the (failed) delete since: named again, not only through `second`
    assert third.used_ids[0] == second.step_id and "m1" in third.used_ids
    assert third.step_id in plan_in_memory(case, ["m1"])["affected_ids"]


def test_evidence_may_name_user_messages_and_outputs() -> None:
    case = transcript_case({"task_id": "t", "messages": [
        {"role": "user", "content": "seat?"},
        {"role": "assistant", "content": "4C"},
        {"role": "user", "content": "meal?"},
        {"role": "assistant", "content": "vegan", "evidence": ["messages[1]", "u_002"]}]}, "t")
    assert case.trace[1].used_ids == case.trace[1].sufficient_ids == ["s_001", "u_002"]
