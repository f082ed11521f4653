"""Nested spans never cut a dependency (issue 36: a reading may over-approximate, never drop
one): a sub-agent or a memory search inside a tool's span reaches the tool's result and what
reads it; a memory write under an enclosing step still depends on what came before it; a
sub-agent with a conversation of its own inside a run is part of that run, in a file as live."""

from __future__ import annotations

import json
from typing import Any

import pytest

from provrepair.benchmark.reference import plan_in_memory
from provrepair.loaders.otel import Span, cases_from_spans
from provrepair.provenance.models import Case

TRACE, NEXT = "ab" * 16, "cd" * 16


def span(n: int, op: str, parent: int | None = None, *, trace: str = TRACE,
         start: int | None = None, end: int | None = None, **attrs: Any) -> Span:
    return Span(trace, f"{n:016x}", start or 1000 * n,
                {"gen_ai.operation.name": op,
                 **{k: v if isinstance(v, str) else json.dumps(v) for k, v in attrs.items()}},
                parent_id=f"{parent:016x}" if parent else None, end_ns=end)


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": name,
                                            "arguments": arguments}]}


def records(*pairs: tuple[str, str]) -> str:
    return json.dumps([{"id": i, "content": c} for i, c in pairs])


def affected(case: Case, fault: str) -> set[str]:
    return set(plan_in_memory(case, [fault])["affected_ids"])


def step(case: Case, content: str) -> str:
    return next(s.step_id for s in case.trace if s.content.startswith(content))


P = {"gen_ai.conversation.id": "P"}
POISON = "Le Potager is the user's favourite (poisoned)"


def test_a_sub_agent_inside_a_tool_reaches_the_tools_result_and_the_answer() -> None:
    """The sub-agent read the poisoned m1; the tool's result ({"pick": …}) does not repeat
    its answer, yet the parent's answer built on it is affected."""
    dinner = call("c1", "research", q="dinner")
    (case,) = cases_from_spans([
        span(1, "invoke_agent", **P),
        span(2, "chat", 1, **P, **{"gen_ai.input.messages": [text("user", "plan dinner")],
                                   "gen_ai.output.messages": [dinner]}),
        span(3, "execute_tool", 1, start=3000, end=7000, **P, **{
            "gen_ai.tool.call.id": "c1", "gen_ai.tool.name": "research",
            "gen_ai.tool.call.result": {"pick": "Le Potager"}}),
        span(4, "invoke_agent", 3, **P),
        span(5, "search_memory", 4, **P, **{"gen_ai.memory.records": records(("m1", POISON))}),
        span(6, "chat", 4, **P, **{
            "gen_ai.input.messages": [text("user", "research dinner"), text("system", POISON)],
            "gen_ai.output.messages": [text("assistant", "Best pick: Le Potager.")]}),
        span(8, "chat", 1, **P, **{
            "gen_ai.input.messages": [text("user", "plan dinner"), dinner, {
                "role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                           "response": {"pick": "Le Potager"}}]}],
            "gen_ai.output.messages": [text("assistant", "Dinner booked at Le Potager.")]}),
    ])
    hit = affected(case, "m1")
    assert {step(case, '{"pick"'), step(case, "Dinner booked")} <= hit


@pytest.mark.parametrize("cited", [True, False])
def test_a_search_inside_a_tool_reaches_a_write_of_its_result(cited: bool) -> None:
    """The tool searched memory inside its span; a write of its result (citing the call, or
    not) is affected by the record the search returned."""
    write = span(5, "create_memory", 1, **P, **{"gen_ai.memory.records": records(
        ("m2", "likes: vegan food"))})
    if cited:
        write.attributes["provrepair.evidence_ids"] = ["c1"]
    (case,) = cases_from_spans([
        span(1, "invoke_agent", **P),
        span(2, "chat", 1, **P, **{"gen_ai.input.messages": [text("user", "what do I like?")],
                                   "gen_ai.output.messages": [call("c1", "recall", q="x")]}),
        span(3, "execute_tool", 1, start=3000, end=3900, **P, **{
            "gen_ai.tool.call.id": "c1", "gen_ai.tool.name": "recall",
            "gen_ai.tool.call.result": "you like vegan food"}),
        span(4, "search_memory", 3, start=3100, **P, **{
            "gen_ai.memory.records": records(("m1", "User is vegan (poisoned)"))}),
        write,
    ])
    assert {"m2", step(case, "you like vegan food")} <= affected(case, "m1")


@pytest.mark.parametrize("frame", ["invoke_workflow", "plan_trip"])
def test_a_write_under_an_enclosing_step_keeps_what_came_before_it(frame: str) -> None:
    """Under a workflow frame (ignored) or an operation not known here (a generic step, read
    at its start, before its children), search m1 → chat → create m2: m2 is affected by m1;
    the unknown operation is kept as a step."""
    (case,) = cases_from_spans([
        span(1, "invoke_agent", **P),
        span(2, frame, 1, end=9000, **P),
        span(3, "search_memory", 2, **P, **{"gen_ai.memory.records": records(
            ("m1", "Le Potager is vegan"))}),
        span(4, "chat", 2, **P, **{
            "gen_ai.input.messages": [text("user", "where to eat"),
                                      text("system", "Le Potager is vegan")],
            "gen_ai.output.messages": [text("assistant", "Eat at Le Potager, it is vegan.")]}),
        span(5, "create_memory", 2, **P, **{"gen_ai.memory.records": records(
            ("m2", "user eats vegan"))}),
    ])
    assert "m2" in affected(case, "m1")
    assert any(s.content.startswith(f"{frame}:") for s in case.trace) == (frame == "plan_trip")


def test_a_sub_agent_with_its_own_conversation_is_part_of_the_outer_run() -> None:
    """Children exported first (the sub-agent's conversation S appears before P's): as live
    capture, the trace is P's run, and P's next turn (another trace) reads turn 1."""
    spans = [
        span(2, "search_memory", 1, **{"gen_ai.memory.records": records(
            ("m1", "Le Potager is vegan"))}),
        span(6, "chat", 5, **{"gen_ai.input.messages": [text("user", "research restaurants")],
                              "gen_ai.output.messages": [text("assistant", "found some")]}),
        span(5, "invoke_agent", 4, **{"gen_ai.conversation.id": "S"}),
        span(4, "execute_tool", 1, start=4000, end=9000, **{
            "gen_ai.tool.call.id": "c1", "gen_ai.tool.name": "research",
            "gen_ai.tool.call.result": "found some"}),
        span(3, "chat", 1, **{
            "gen_ai.input.messages": [text("user", "plan dinner"),
                                      text("system", "Le Potager is vegan")],
            "gen_ai.output.messages": [call("c1", "research", q="x")]}),
        span(10, "chat", 1, **{"gen_ai.input.messages": [text("user", "plan dinner")],
                               "gen_ai.output.messages": [text("assistant", "Go tonight")]}),
        span(1, "invoke_agent", end=11000, **P),
        span(21, "invoke_agent", trace=NEXT, start=20000, **P),
        span(22, "chat", 21, trace=NEXT, start=21000, **{"gen_ai.input.messages": [
            text("user", "plan dinner"), text("assistant", "Go tonight"), text("user", "book")],
            "gen_ai.output.messages": [text("assistant", "Booked Le Potager")]}),
    ]
    (case,) = cases_from_spans(spans)
    assert case.task_id == "P"
    assert step(case, "Booked") in affected(case, "m1")
