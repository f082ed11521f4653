"""LLM-judge repair over real HTTP against the OpenAI-compatible test double
(tests/openai_double.py): the plan JSON is validated, retried with the error appended,
executed by the shared executor; an exhausted budget fails the case with a no-op plan."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.methods.base import Decision
from provrepair.repair.reasoners.openai_reasoner import OpenAIReasoner
from provrepair.repair.service import repair_task
from tests.helpers import example_case
from tests.openai_double import ChatDouble, Reply

TASK = "shopping_task_014"
ANSWER = "The lowest current price for P0199 is at StoreC: $63.99."


def present_steps() -> list[str]:
    return [s.step_id for s in example_case().trace]


def judge_plan(**overrides: Any) -> Reply:
    plan = {"delete_memory_ids": ["m_f003"], "quarantine_memory_ids": [],
            "invalidate_claim_ids": ["s_012"], "replay_step_ids": ["s_012"],
            "preserve_step_ids": [s for s in present_steps() if s != "s_012"],
            "redundant_step_ids": [],
            "suspicious_step_ids": [], "reason": "the answer used the poisoned price"}
    return Reply(json.dumps({**plan, **overrides}))


@pytest.fixture
def double() -> Iterator[ChatDouble]:
    chat = ChatDouble()
    chat.base_url = chat.start()  # type: ignore[attr-defined]
    yield chat
    chat.stop()


def llm(double: ChatDouble) -> OpenAIReasoner:
    client = openai.OpenAI(api_key="test", base_url=double.base_url,  # type: ignore[attr-defined]
                           timeout=5.0, max_retries=0)
    return OpenAIReasoner(client, "double-model", attempts=1)


def test_an_invalid_plan_is_retried_with_the_error_then_executed(
        falkordb_store: GraphStore, double: ChatDouble) -> None:
    double.script = [
        Reply("not json"),
        judge_plan(delete_memory_ids=[]),                                # misses the fault
        judge_plan(),
        Reply(json.dumps({"content": ANSWER, "cited_ids": ["u_2"]})),    # replay of s_012
    ]
    ingest_case(falkordb_store, example_case())
    report = repair_task(falkordb_store, TASK, llm(double), method="llm_judge")
    decision = Decision(**report.decision)
    assert (decision.llm_calls, decision.tokens, decision.failed) == (3, 150, False)
    assert report.deleted == ["m_f003"] and report.plan["replay_step_ids"] == ["s_012"]
    assert report.answer == ANSWER and report.counts["llm_calls"] == 1
    retry = double.requests[1]["messages"]
    assert retry[-1]["role"] == "user" and "invalid JSON" in retry[-1]["content"]
    assert "missing ['m_f003']" in double.requests[2]["messages"][-1]["content"]
    view = json.loads(double.requests[0]["messages"][1]["content"])
    assert view["diagnosed_faulty_memory_ids"] == ["m_f003"]
    assert view["wrong_final_answer"]["step_id"] == "s_012"
    assert "evaluation" not in json.dumps(view) and "expected_answer" not in json.dumps(view)


@pytest.mark.parametrize(("bad", "error"), [
    ({"preserve_step_ids": ["s_012"]}, "replay_step_ids and preserve_step_ids overlap"),
    ({"replay_step_ids": ["s_999"]}, "not valid step ids: ['s_999']"),
    ({"delete_memory_ids": ["m_f003", "s_001"]}, "not valid memory ids: ['s_001']"),
    ({"reason": 3}, "malformed field reason"),
    ({"extra": []}, "malformed field extra"),
])
def test_an_exhausted_budget_fails_the_case_with_a_no_op_plan(
        falkordb_store: GraphStore, double: ChatDouble, bad: dict[str, Any], error: str) -> None:
    double.script = [judge_plan(**bad)] * 3
    ingest_case(falkordb_store, example_case())
    report = repair_task(falkordb_store, TASK, llm(double), method="llm_judge")
    decision = Decision(**report.decision)
    assert decision.failed and decision.llm_calls == 3 and len(double.requests) == 3
    assert error in decision.notes[0]
    assert report.plan["replay_step_ids"] == [] and report.deleted == []
    assert report.answer == next(s.content for s in example_case().trace if s.step_id == "s_012")


def test_api_errors_count_as_attempts(falkordb_store: GraphStore, double: ChatDouble) -> None:
    double.script = [Reply(status=500), Reply(status=503), Reply(status=500)]
    ingest_case(falkordb_store, example_case())
    report = repair_task(falkordb_store, TASK, llm(double), method="llm_judge")
    decision = Decision(**report.decision)
    assert decision.failed and decision.llm_calls == 3 and decision.tokens == 0
