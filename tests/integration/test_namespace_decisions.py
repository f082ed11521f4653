"""A namespace repair that stops for a person (README, "One fault, every conversation it
reached", with the side-effect rules of "When a person must decide"), through the CLI's
commands on both engines: a later conversation that read the fault issued an irreversible
refund; the namespace repair stops before re-issuing it (exit 3) listing the call with its
arguments and hash; `--approve TASK:STEP:HASH` finishes it with the call issued exactly once
(a real, counted effect: tests/side_effect_tools.py), and the same command again changes
nothing; in another namespace, `--skip TASK:STEP` ends partial, sending nothing, and a
wrong hash, an unknown conversation or a step the stop does not wait on is one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.state.calls import call_id
from tests import side_effect_tools
from tests.conftest import REPO, Cli

NS, SKIP_NS = "shop-7", "shop-8"
REFUND = REPO / "tests" / "cases" / "replay" / "small_side_effect_needs_human.json"
TOOLS = ["--tools", "tests.side_effect_tools:TOOLS"]
CALL = call_id("s_003", "issue_refund", {"amount": "$120.00", "order_id": "ORD00200"})


def conversations(folder: Path, ns: str, a_id: str, b_id: str) -> list[str]:
    """Conversation `a_id` holds the planted total first and answers from it; `b_id`, later,
    read the same record from the store and refunded from it (the refund case of the
    call-log tests, in the namespace `ns`). Written to files for `provrepair ingest`."""
    b = json.loads(REFUND.read_text())
    b.update(task_id=b_id, memory_namespace=ns, diagnosed_faults=[])
    for item in [*b["session"], *b["trace"], *b["memory_store"]]:
        item["task_id"] = b_id
    for item in [*b["session"], *b["trace"]]:
        item["timestamp"] += 1000
    a: dict[str, Any] = {
        "format": b["format"], "task_id": a_id, "domain": b["domain"],
        "memory_namespace": ns, "diagnosed_faults": [],
        "session": [{**b["session"][0], "task_id": a_id, "timestamp": 50}],
        "memory_store": [{**m, "task_id": a_id} for m in b["memory_store"]
                         if m["memory_id"] in ("m_001", "m_f002")],
        "trace": [
            {**b["trace"][0], "task_id": a_id, "timestamp": 51, "next_step_ids": ["s_002"]},
            {"step_id": "s_002", "task_id": a_id, "step_type": "final_answer",
             "content": "ORD00200 total: $240.00", "prev_step_ids": ["s_001"],
             "next_step_ids": [], "invalidated_memory_ids": [], "generated_memory_ids": [],
             "used_ids": ["s_001"], "sufficient_ids": [], "timestamp": 52, "turn": 1,
             "derivation": {"fn": "template", "args": {"text": "ORD00200 total: {t}", "bind": {
                 "t": {"fn": "lookup", "args": {"entity_id": "ORD00200",
                                                "fact_key": "total"}}}}}}]}
    paths = []
    for case in (a, b):
        path = folder / f"{case['task_id']}.json"
        path.write_text(json.dumps(case))
        paths.append(str(path))
    return paths


@pytest.fixture
def run(engine_cli: Cli, tmp_path: Path, effects: Path) -> Any:
    """`provrepair ARGS...` in this process (click's runner, the real commands) on either
    engine, after two namespaces of two conversations each were ingested (NS: order-a,
    refund-b; SKIP_NS: order-c, refund-d): (exit code, stdout, stderr)."""
    from click.testing import CliRunner

    from provrepair.cli import main

    runner = CliRunner()

    def invoke(*args: str) -> tuple[int, str, str]:
        result = runner.invoke(main, list(args), env=engine_cli.env)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        return result.exit_code, result.stdout, result.stderr

    files = [*conversations(tmp_path, NS, "order-a", "refund-b"),
             *conversations(tmp_path, SKIP_NS, "order-c", "refund-d")]
    assert invoke("ingest", *files)[0] == 0
    return invoke


def repair(run: Any, *args: str, ns: str = NS) -> tuple[int, dict[str, Any]]:
    code, out, _ = run("repair", "--namespace", ns, "--faults", "m_f002", *TOOLS, "--json",
                       *args)
    return code, json.loads(out)


def test_approve_sends_the_call_once_and_skip_sends_nothing(
        run: Any, effects: Path) -> None:
    # options of a task's repair are refused with --namespace, never ignored (--dry-run
    # repaired for real): one line naming the option, nothing run
    for option in (["--dry-run"], ["--resume"], ["--continue"], ["--no-early-cutoff"],
                   ["--method", "paper"], ["--quarantine-copies"], ["--scope", "namespace"],
                   ["--task", "order-a"]):
        code, _, err = run("repair", "--namespace", NS, "--faults", "m_f002", *TOOLS, *option)
        assert code == 2 and err.startswith(f"InputError: repair --namespace {NS}: "
                                            f"{option[0]} is not supported"), err
        assert len(err.splitlines()) == 1, err
    _, out, _ = run("history", "--task", "order-a", "--json")
    assert json.loads(out) == []  # the dry run repaired nothing
    code, text, _ = run("repair", "--namespace", NS, "--faults", "m_f002", *TOOLS)
    assert code == 3, text
    assert "order-a: repaired" in text and "refund-b: needs_human" in text
    assert "patch --namespace" not in text  # decide first
    assert f's_003  issue_refund {{"amount":"$120.00","order_id":"ORD00200"}}  #{CALL}' in text
    assert "--approve refund-b:s_003" in text
    assert side_effect_tools.made(effects) == []  # nothing sent before a person decided
    _, out, _ = run("pending", "--task", "refund-b", "--json")  # the conversation's own stop
    assert [c["call_id"] for c in json.loads(out)] == [CALL]

    code, _, err = run("patch", "--namespace", NS)  # half a run is no patch of the store
    assert code == 2 and "conversation(s) refund-b not repaired yet" in err, err

    code, stopped = repair(run)  # the same command: still waiting, nothing sent
    assert code == 3 and stopped["status"] == "needs_human"
    assert [p["call_id"] for p in stopped["conversations"][1]["pending"]] == [CALL]

    code, done = repair(run, "--approve", f"refund-b:s_003:{CALL[:6]}")
    assert code == 0, done
    assert done["status"] == "repaired" and done["run_id"] == stopped["run_id"]
    assert {c["task_id"]: c["corrected_answer"] for c in done["conversations"]} == {
        "order-a": "ORD00200 total: $120.00", "refund-b": "Refunded $120.00 for ORD00200."}
    assert [(e["tool"], e["amount"]) for e in side_effect_tools.made(effects)] == [
        ("issue_refund", "$120.00")]

    code, again = repair(run, "--approve", f"refund-b:s_003:{CALL[:6]}")
    assert code == 0 and again["status"] == "already_repaired"
    assert again["conversations"] == done["conversations"]
    assert len(side_effect_tools.made(effects)) == 1  # sent exactly once
    _, out, _ = run("history", "--task", "refund-b", "--json")
    sent = [c for r in json.loads(out) for c in r["side_effects"]]
    assert [(c["call_id"], c["attempts"], c["approval"] is not None) for c in sent] == [
        (CALL, 1, True)]

    # Skipped instead (the other namespace): partial, nothing sent; bad decisions are one line
    assert repair(run, ns=SKIP_NS)[0] == 3
    for value, error in ((f"refund-d:s_003:{'0' * 6}", "NothingToResume: task 'refund-d': the "
                          f"call the stop showed at step 's_003' is #{CALL}, not #000000"),
                         ("refund-x:s_003", "InputError: --approve refund-x:s_003: name a step "
                          "of a conversation"),
                         ("refund-d:s_009", "NothingToResume: task 'refund-d': step 's_009' "
                          "is not one the stopped repair waits on")):
        code, _, err = run("repair", "--namespace", SKIP_NS, "--faults", "m_f002", *TOOLS,
                           "--approve", value)
        assert code == 2 and err.startswith(error) and len(err.splitlines()) == 1, err
    code, skipped = repair(run, "--skip", "refund-d:s_003", ns=SKIP_NS)
    assert code == 4, skipped
    assert skipped["status"] == "partial"
    b = skipped["conversations"][1]
    assert b["status"] == "partial" and "s_003" in b["unresolved"]
    assert len(side_effect_tools.made(effects)) == 1  # only the refund approved above
