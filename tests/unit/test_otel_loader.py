"""loaders/otel.py without a server: which spans form a run, and an agent whose tools are not
instrumented (its tool results only appear in the next inference's input messages)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from provrepair.loaders.otel import Span, cases_from_spans
from provrepair.provenance.errors import CaseError

TRACE = "ab" * 16


def span(n: int, op: str, trace: str = TRACE, **attrs: Any) -> Span:
    return Span(trace, f"{n:016x}", 1000 * n, {"gen_ai.operation.name": op, **attrs})


def chat(n: int, inputs: list[dict[str, Any]], outputs: list[dict[str, Any]], **attrs: Any) -> Span:
    return span(n, "chat", **{"gen_ai.input.messages": json.dumps(inputs),
                              "gen_ai.output.messages": json.dumps(outputs)}, **attrs)


USER = {"role": "user", "parts": [{"type": "text", "content": "price of P0199 at StoreA?"}]}
CALL = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "get_price",
                                        "arguments": {"store": "StoreA"}}]}
RESULT = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                     "response": {"price": "$68.50"}}]}
ANSWER = {"role": "assistant", "parts": [{"type": "text", "content": "$68.50"}]}


def test_inference_spans_without_a_conversation_join_their_traces_conversation() -> None:
    cases = cases_from_spans([
        span(1, "invoke_agent", **{"gen_ai.conversation.id": "conv-1"}),
        chat(2, [USER], [ANSWER]),
        span(3, "chat", trace="cd" * 16),  # another trace, no conversation: its own run
    ])
    assert sorted(c.task_id for c in cases) == ["conv-1", f"trace-{'cd' * 16}"]


def test_tool_results_read_from_the_next_inference_input() -> None:
    (case,) = cases_from_spans([chat(1, [USER], [CALL]), chat(2, [USER, CALL, RESULT], [ANSWER])])
    kinds = [(s.step_type, s.content) for s in case.trace]
    assert kinds == [("plan", "(tool calls)"), ("tool_action", 'get_price(store="StoreA")'),
                     ("tool_observation", '{"price": "$68.50"}'), ("final_answer", "$68.50")]
    # the input re-sends the first output's whole context: the answer depends on that output
    # and on what is new (the call and its result), the same reach as naming u_001 again
    assert case.trace[3].used_ids == ["s_001", "s_002", "s_003"]
    assert case.trace[0].used_ids == ["u_001"]


def test_an_execute_tool_span_is_not_read_twice() -> None:
    (case,) = cases_from_spans([
        chat(1, [USER], [CALL]),
        span(2, "execute_tool", **{"gen_ai.tool.call.id": "c1", "gen_ai.tool.call.result": "$68.50"}),
        chat(3, [USER, CALL, RESULT], [ANSWER])])
    assert [s.step_type for s in case.trace].count("tool_observation") == 1


def test_a_tool_response_for_a_call_never_made_is_an_orphan() -> None:
    with pytest.raises(CaseError, match="orphan tool result"):
        cases_from_spans([chat(1, [USER, RESULT], [ANSWER])])


def test_the_otlp_json_writer_keeps_resource_and_scope() -> None:
    """OtlpJsonFile and the trace exporter (loaders/otel_live.py otlp_json) group spans as
    OTLP does: by resource, with its attributes (service.name), then by scope (name,
    version); the loader reads the document back."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from provrepair.loaders.otel import otlp_spans
    from provrepair.loaders.otel_live import otlp_json
    from provrepair.loaders.otlp_json import value_of

    kept = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "shop-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(kept))
    for scope, version in (("agent.core", "1.2"), ("agent.memory", None)):
        with provider.get_tracer(scope, version).start_as_current_span("x") as made:
            made.set_attribute("gen_ai.operation.name", "chat")
    document = otlp_json(kept.get_finished_spans())
    (resource,) = document["resourceSpans"]
    attributes = {a["key"]: value_of(a["value"]) for a in resource["resource"]["attributes"]}
    assert attributes["service.name"] == "shop-agent"
    assert [s["scope"] for s in resource["scopeSpans"]] == [
        {"name": "agent.core", "version": "1.2"}, {"name": "agent.memory"}]
    assert len(otlp_spans(document, "t")) == 2
