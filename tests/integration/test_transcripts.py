"""OpenAI-style transcripts in (`ingest --from openai-messages`), through the real CLI."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "transcripts" / \
    "shopping_transcript.json"
BASE: dict[str, Any] = json.loads(EXAMPLE.read_text())
TASK = BASE["task_id"]


def plan_of(cli: Cli, transcript: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(transcript))
    done = cli("ingest", "--from", "openai-messages", "--replace", str(path))
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(cli("plan", "--task", TASK, "--json").stdout)
    return result


def test_conservative_dependencies_plan(cli: Cli, tmp_path: Path) -> None:
    plan = plan_of(cli, BASE, tmp_path)
    assert plan["delete_memory_ids"] == ["m_price_b"]
    assert plan["quarantine_memory_ids"] == ["m_best"]  # written from a poisoned context
    assert "m_price_c" not in plan["affected_ids"]
    assert plan["replay_step_ids"][-1] == "s_008"  # the last turn's answer is regenerated
    case = json.loads(cli("show", "--task", TASK, "--json").stdout)
    answer = case["trace"][4]
    assert answer["step_type"] == "final_answer" and answer["sufficient_ids"] == []
    # the transcript is the context: the previous output (which read the records and the
    # question) and what came since (the tool result)
    assert answer["used_ids"] == ["s_002", "s_004"]
    assert set(case["trace"][1]["used_ids"]) == {"u_001", "s_001", "m_price_b", "m_price_c"}


def test_explicit_evidence_narrows_the_plan(cli: Cli, tmp_path: Path) -> None:
    conservative = plan_of(cli, BASE, tmp_path)
    explicit = copy.deepcopy(BASE)
    explicit["messages"][2]["evidence"] = ["u_001"]
    explicit["messages"][4]["content"] = json.dumps(
        {"answer": "StoreC is cheapest at $63.99.", "evidence": ["m_price_c", "call_a"]})
    plan = plan_of(cli, explicit, tmp_path)
    assert set(plan["affected_ids"]) < set(conservative["affected_ids"])
    assert "s_005" not in plan["affected_ids"]  # its evidence is independent of the fault
    case = json.loads(cli("show", "--task", TASK, "--json").stdout)
    assert case["trace"][4]["sufficient_ids"] == ["m_price_c", "s_004"]


def test_a_delete_that_a_later_search_contradicts_is_the_seed(cli: Cli,
                                                             tmp_path: Path) -> None:
    stale = copy.deepcopy(BASE)
    stale["memory_events"] = [
        {"after": 1, "op": "search", "records": [{"id": "m_old", "content": "Ship to 1 Elm St"}]},
        {"after": 1, "op": "delete", "id": "m_old"},
        {"after": 4, "op": "search", "records": [{"id": "m_old", "content": "Ship to 1 Elm St"}]}]
    stale["diagnosed_faults"] = ["m_old"]
    plan = plan_of(cli, stale, tmp_path)
    case = json.loads(cli("show", "--task", TASK, "--json").stdout)
    delete_step = next(s for s in case["trace"] if s["step_type"] == "memory_delete")
    assert plan["seeds"] == {"m_old": delete_step["step_id"]}  # the failed mutation
    assert {m["memory_id"]: m["status"] for m in case["memory_store"]}["m_old"] == "active"


@pytest.mark.parametrize(("mutate", "needle"), [
    (lambda t: t["messages"].append({"role": "tool", "tool_call_id": "nope", "content": "x"}),
     "orphan tool result"),
    (lambda t: t["messages"].append({"role": "robot", "content": "x"}), "unknown role"),
    (lambda t: t["messages"][2]["tool_calls"][0]["function"].update(arguments="{bad"),
     "arguments are not JSON"),
    (lambda t: t["memory_events"].append({"after": 1, "op": "forget", "id": "m"}),
     "is not one of"),
    (lambda t: t["messages"][4].update(evidence=["m_unknown"]), "names nothing"),
    (lambda t: t.update(requests=[{"messages": []}]), "1 request(s) for 3 assistant"),
    (lambda t: t.update(requests=[{"messages": [{"role": "tool", "content": "x"}]}] * 3),
     "requests[0].messages[0].tool_call_id"),
])
def test_bad_transcripts_are_one_line_and_write_nothing(cli: Cli, tmp_path: Path,
                                                        mutate: Any, needle: str) -> None:
    bad = copy.deepcopy(BASE)
    mutate(bad)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    done = cli("ingest", "--from", "openai-messages", str(path))
    assert done.returncode == 2 and done.stderr.startswith("CaseError: ")
    assert needle in done.stderr and len(done.stderr.splitlines()) == 1
    assert json.loads(cli("tasks", "--json").stdout) == []


def test_a_transcript_with_its_requests_narrows_to_what_each_call_was_sent(
        cli: Cli, tmp_path: Path) -> None:
    """The bundled request-form example: the second turn's call was sent only its question,
    so the poisoned price reaches the first answer and the record written from it, not the
    second answer; read without its requests, everything earlier reaches everything later."""
    example = EXAMPLE.parent / "shopping_transcript_requests.json"
    transcript = json.loads(example.read_text())
    task = transcript["task_id"]
    done = cli("ingest", "--from", "openai-messages", "--replace", str(example))
    assert done.returncode == 0, done.stderr
    plan = json.loads(cli("plan", "--task", task, "--json").stdout)
    assert {"s_005", "s_006", "m_best"} <= set(plan["affected_ids"])
    assert "s_007" not in plan["affected_ids"]
    assert plan["quarantine_memory_ids"] == ["m_best"]
    path = tmp_path / "plain.json"
    path.write_text(json.dumps({k: v for k, v in transcript.items() if k != "requests"}))
    assert cli("ingest", "--from", "openai-messages", "--replace", str(path)).returncode == 0
    plain = json.loads(cli("plan", "--task", task, "--json").stdout)
    assert set(plan["affected_ids"]) < set(plain["affected_ids"])
    assert "s_007" in plain["affected_ids"]
