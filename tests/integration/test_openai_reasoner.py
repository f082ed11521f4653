"""The `openai` reasoner over real HTTP against an OpenAI-compatible test double
(tests/openai_double.py): valid replies, invalid JSON, invented ids, timeouts."""

from __future__ import annotations

import json
from collections.abc import Iterator

import openai
import pytest

from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.reasoners.openai_reasoner import OpenAIReasoner
from provrepair.repair.service import repair_task
from tests.helpers import example_case
from tests.openai_double import ChatDouble, Reply

TASK = "shopping_task_014"
ANSWER = "The lowest current price for P0199 is at StoreC: $63.99."


def content(text: str, cited: list[str]) -> Reply:
    return Reply(json.dumps({"content": text, "cited_ids": cited}))


def valid_script() -> list[Reply]:
    """One reply per LLM-regenerated step of the example, in replay order."""
    return [
        Reply(json.dumps({"target_step_id": "s_005", "content": "P0199 at StoreC: $63.99",
                          "cited_ids": ["s_004"], "facts": [{"entity_id": "StoreC",
                          "fact_key": "price_P0199", "fact_value": "$63.99"}]})),
        content("StoreC currently sells P0199 at $63.99", ["u_2"]),
        content("Compare the current prices of P0199 at every store", ["u_2"]),
        Reply(json.dumps({"target_step_id": "s_010", "tool_name": "compare_price",
                          "tool_args": {"product_id": "P0199"}, "cited_ids": ["m_001"]})),
        content(ANSWER, ["u_2"]),
    ]


@pytest.fixture
def double() -> Iterator[ChatDouble]:
    chat = ChatDouble()
    chat.base_url = chat.start()  # type: ignore[attr-defined]
    yield chat
    chat.stop()


def reasoner(double: ChatDouble, timeout: float = 5.0) -> OpenAIReasoner:
    client = openai.OpenAI(api_key="test", base_url=double.base_url,  # type: ignore[attr-defined]
                           timeout=timeout, max_retries=0)
    return OpenAIReasoner(client, "double-model", attempts=3)


def test_repair_with_valid_replies(falkordb_store: GraphStore, double: ChatDouble) -> None:
    ingest_case(falkordb_store, example_case())
    double.script = valid_script()
    report = repair_task(falkordb_store, TASK, reasoner(double))
    assert report.answer == ANSWER
    assert report.counts["llm_calls"] == 5 and report.counts["tokens"] == 250
    first = double.requests[0]
    assert first["model"] == "double-model"
    assert first["response_format"] == {"type": "json_object"}
    context = json.loads(first["messages"][1]["content"])
    visible = {m["id"] for m in context["memories"]}
    assert "m_f003" not in visible  # the deleted record is never shown
    assert context["target"]["untrusted_old_content"] == "P0199 at StoreC: $88.67"


def test_invalid_json_is_retried_with_the_error(falkordb_store: GraphStore,
                                                double: ChatDouble) -> None:
    ingest_case(falkordb_store, example_case())
    script = valid_script()
    double.script = [Reply("{not json"), *script]
    report = repair_task(falkordb_store, TASK, reasoner(double), dry_run=True)
    assert report.answer == ANSWER
    assert report.counts["llm_calls"] == 6
    retry = double.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "{not json"}
    assert "Invalid reply" in retry[-1]["content"]


def test_invented_or_withheld_ids_are_rejected(falkordb_store: GraphStore,
                                               double: ChatDouble) -> None:
    ingest_case(falkordb_store, example_case())
    script = valid_script()
    invented = content(ANSWER, ["u_2", "m_invented"])
    withheld = content(ANSWER, ["s_011"])  # the old observation: invalidated, withheld
    double.script = [*script[:4], invented, withheld, script[4]]
    report = repair_task(falkordb_store, TASK, reasoner(double), dry_run=True)
    assert report.answer == ANSWER
    assert report.counts["llm_calls"] == 7
    errors = [r["messages"][-1]["content"] for r in double.requests[5:7]]
    assert "m_invented" in errors[0] and "s_011" in errors[1]


def test_timeouts_exhaust_attempts_and_leave_the_step_unresolved(
        falkordb_store: GraphStore, double: ChatDouble) -> None:
    ingest_case(falkordb_store, example_case())
    script = valid_script()
    slow = [Reply(script[4].content, delay=1.5) for _ in range(3)]
    double.script = [*script[:4], *slow]
    report = repair_task(falkordb_store, TASK, reasoner(double, timeout=0.5), dry_run=True)
    assert report.answer is None
    assert "APITimeoutError" in report.unresolved["s_012"]
    assert report.counts["llm_calls"] == 7


def test_missing_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from provrepair.provenance.errors import ConfigError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIReasoner.from_env()


def test_the_run_records_the_model_and_a_token_budget_stops_it(
        falkordb_store: GraphStore, double: ChatDouble) -> None:
    """Each reply costs 50 tokens: a budget of 100 lets two calls through, then no request is
    sent and the steps left are unresolved, saying why (partial)."""
    ingest_case(falkordb_store, example_case())
    double.script = valid_script()
    client = openai.OpenAI(api_key="test", base_url=double.base_url,  # type: ignore[attr-defined]
                           timeout=5.0, max_retries=0)
    brain = OpenAIReasoner(client, "double-model", budget=100)
    report = repair_task(falkordb_store, TASK, brain)
    assert report.status == "partial" and len(double.requests) == 2
    assert report.reasoner == {
        "reasoner": "openai", "model": "double-model", "prompt_contract": report.reasoner[
            "prompt_contract"], "contracts": {"content": 1, "memory": 1}, "calls": 2,
        "prompt_tokens": 80, "completion_tokens": 20, "total_tokens": 100, "max_calls": None,
        "budget": 100, "exhausted": "--budget of 100 tokens used"}
    assert report.reasoner["prompt_contract"].startswith("replay/")
    assert any("--budget of 100 tokens used" in why for why in report.unresolved.values())


def test_limits_below_one_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from provrepair.provenance.errors import ConfigError
    from provrepair.repair.reasoners import make_reasoner

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with pytest.raises(ConfigError, match="--max-calls must be at least 1, not 0"):
        make_reasoner("openai", max_calls=0)
