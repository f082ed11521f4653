"""A real agent's run repaired end to end: the agent of tests/mcp_agent.py (real `openai`
client instrumented by opentelemetry-instrumentation-openai-v2, tools on an MCP server over
stdio, memory in a LangGraph SqliteStore) runs on a poisoned memory and is recorded live; the
repair (`--reasoner openai` against the OpenAI-compatible double answering the real prompt
contracts, `--tools` declaring the MCP server) re-runs the read-only tool through MCP, stops
before the irreversible order and email (sent together, parallel calls), and sends each
corrected one exactly once as a person approves them, a kill -9 right after the order
included; the patch goes to the agent's store, and the agent, asked again, answers from the
repaired memory."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import NoOpTracer

from provrepair.loaders.otel_live import ProvrepairSpanExporter
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.reasoners.prompts import CONTRACTS
from tests import hooked_cli, mcp_agent, otel_agent
from tests.conftest import REPO, Cli
from tests.openai_double import ChatDouble

RUN = "conv-order-1"
POISONED = {"m_price_b": "StoreB sells P0199 for $59.99",   # the fault: StoreB asks $74.99
            "m_price_c": "StoreC sells P0199 for $63.99"}


def calls(log: Path) -> list[tuple[str, str]]:
    """The calls that reached the MCP server, in order: (tool, store or email body)."""
    if not log.exists():
        return []
    return [(c["tool"], c["args"].get("store") or c["args"]["body"])
            for c in map(json.loads, log.read_text().splitlines())]


def effects(log: Path) -> list[tuple[str, str]]:
    """What the MCP server did in the world: orders placed, emails sent."""
    return [(c["tool"], c["args"].get("store") or c["args"]["body"])
            for c in map(json.loads, log.read_text().splitlines()) if c["effect"]]


def record_poisoned_run(store: GraphStore, db: Path, base_url: str, log: Path) -> str:
    memory = mcp_agent.memory_store(db)
    for key, content in POISONED.items():
        memory.put(("memories",), key, {"content": content})
    provider = TracerProvider()
    exporter = ProvrepairSpanExporter(store)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    client = openai.OpenAI(base_url=base_url, api_key="test")
    try:
        with otel_agent.openai_instrumented(provider):
            answer = mcp_agent.run(provider.get_tracer("agent"), client, memory, RUN,
                                   ["m_price_b"], log)
    finally:
        provider.shutdown()
    assert exporter.errors == [] and exporter.stored == [RUN]
    return answer


@dataclass
class Recorded:
    """The agent's poisoned run, recorded live; the double still answering at `base_url`."""

    log: Path       # the calls that reached its MCP server
    db: Path        # its LangGraph memory
    double: ChatDouble
    base_url: str
    answer: str


@pytest.fixture
def recorded(falkordb_store: GraphStore, cli: Cli, tmp_path: Path) -> Iterator[Recorded]:
    log, db = tmp_path / "mcp_calls.jsonl", tmp_path / "agent.db"
    double = ChatDouble(respond=mcp_agent.model)
    base_url = double.start()
    try:
        answer = record_poisoned_run(falkordb_store, db, base_url, log)
        cli.env.update(OPENAI_API_KEY="test", OPENAI_BASE_URL=base_url,
                       OPENAI_MODEL="repair-model")
        yield Recorded(log, db, double, base_url, answer)
    finally:
        double.stop()


def tools_file(path: Path, log: Path) -> Path:
    """The agent's tools for the repair: its MCP server and its OpenAI schemas; `get_price`
    read-only, `place_order` irreversible with the idempotency key the server accepts,
    `send_email` irreversible."""
    command = mcp_agent.server_command()
    path.write_text(json.dumps({
        "mcp_servers": [{"command": command[0], "args": command[1:],
                         "env": mcp_agent.server_env(log)}],
        "openai_tools": mcp_agent.TOOLS,
        "tools": {"get_price": "read_only", "send_email": "irreversible",
                  "place_order": {"side_effect": "irreversible",
                                  "idempotency_key": "idempotency_key"}}}))
    return path


def repair(cli: Cli, *args: str) -> tuple[int, dict[str, Any]]:
    done = cli("repair", "--task", RUN, "--reasoner", "openai", "--json", *args)
    assert done.returncode in (0, 3, 4), done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, report


def test_a_real_agent_is_repaired_end_to_end(recorded: Recorded, cli: Cli,
                                             tmp_path: Path) -> None:
    log, db, double = recorded.log, recorded.db, recorded.double
    assert recorded.answer.startswith("Ordered the P0199 headset at StoreB")  # fooled
    wrong = "Ordering the P0199 headset at StoreB for $59.99."
    assert calls(log) == [("get_price", "StoreA"), ("place_order", "StoreB"),
                          ("send_email", wrong)]
    agent_requests = len(double.requests)

    tools = str(tools_file(tmp_path / "tools.json", log))
    code, stopped = repair(cli, "--tools", tools)
    assert code == 3 and stopped["status"] == "needs_human"
    # both corrected calls wait for a person, shown with their arguments and hash
    right = "Ordering the P0199 headset at StoreC for $63.99."
    shown = {p["tool"]: p for p in stopped["pending"]}
    assert shown["place_order"]["args"] == {"store": "StoreC"}
    assert shown["send_email"]["args"] == {"to": mcp_agent.USER, "body": right}
    assert "neither idempotent nor compensable" in shown["place_order"]["reason"]
    # the read-only price check ran again through MCP; nothing was ordered or sent
    assert calls(log)[3:] == [("get_price", "StoreA")]
    assert stopped["deleted"] == ["m_price_b"] and stopped["quarantined"] == ["m_best"]
    pending = cli("pending", "--task", RUN)
    assert f"place_order {{\"store\":\"StoreC\"}}  #{shown['place_order']['call_id']}" \
        in pending.stdout
    assert json.loads(cli("pending", "--task", RUN, "--json").stdout) == stopped["pending"]

    # the repair spoke the real prompt contracts to the model
    contracts = double.requests[agent_requests:]
    assert contracts and all(r["response_format"] == {"type": "json_object"} for r in contracts)
    systems = " ".join(r["messages"][0]["content"] for r in contracts)
    assert CONTRACTS["tool_action"][1] in systems and CONTRACTS["content"][1] in systems
    offered = json.loads(contracts[0]["messages"][-1]["content"])["tools"]  # with their classes
    assert [(t["name"], t["side_effect"]) for t in offered] == [
        ("get_price", False), ("place_order", True), ("send_email", True)]

    # the person approves the order; the resume is killed right after the order was placed
    order = shown["place_order"]["step_id"]
    killed = subprocess.run(hooked_cli.command("repair", "--task", RUN, "--reasoner", "openai",
                                               "--tools", tools, "--resume", "--approve", order),
                            capture_output=True, text=True, timeout=120,
                            env={**cli.env, "HOOK_KILL_AT": "after_call",
                                 "PYTHONPATH": str(REPO)})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert effects(log)[2:] == [("place_order", "StoreC")]
    # the same command again: the order is sent with the same idempotency key (no second
    # order); the email still waits
    code, second = repair(cli, "--tools", tools, "--resume", "--approve", order)
    assert code == 3 and [p["tool"] for p in second["pending"]] == ["send_email"]
    assert effects(log)[2:] == [("place_order", "StoreC")]
    email = second["pending"][0]["step_id"]
    code, done = repair(cli, "--tools", tools, "--resume", "--approve", email)
    assert code == 0 and done["status"] == "repaired", done["unresolved"]
    assert done["unresolved"] == {} and done["needs_human"] is None
    # each corrected side effect exactly once; the price check was never sent again
    assert effects(log) == [("place_order", "StoreB"), ("send_email", wrong),
                            ("place_order", "StoreC"), ("send_email", right)]
    assert [c for c in calls(log)[3:] if c[0] == "get_price"] == [("get_price", "StoreA")]
    assert done["answer"] == "Ordered the P0199 headset at StoreC for $63.99, the cheapest."
    used = done["reasoner"]
    assert used["model"] == "repair-model" and used["prompt_contract"].startswith("replay/")
    assert used["calls"] > 0 and used["total_tokens"] == 120 * used["calls"]

    # the graph holds what was sent (each parallel action with its own result), and the
    # history what was done in the world, with the approval that allowed it
    trace = json.loads(cli("show", "--task", RUN, "--json").stdout)["trace"]
    observed = [s["content"] for s in trace if s["step_type"] == "tool_observation"]
    assert observed == ["StoreA: $68.50", "order placed at StoreC ($63.99)",
                        f"email sent to {mcp_agent.USER}: {right}"]
    history = json.loads(cli("history", "--task", RUN, "--json").stdout)
    assert [r["status"] for r in history] == ["needs_human", "needs_human", "repaired"]
    sent = {c["tool"]: c for r in history for c in r["side_effects"]}
    assert sent["place_order"]["attempts"] == 2 and sent["place_order"]["status"] == "done"
    assert sent["place_order"]["approval"]["run_id"] == second["run_id"] or \
        sent["place_order"]["approval"] is not None
    assert sent["send_email"]["args"]["body"] == right
    assert sent["send_email"]["approval"]["run_id"] == done["run_id"]

    # one apply at the end carries the net change of every run (the cumulative patch)
    applied = cli("apply", "--task", RUN, "--to", f"langgraph-sqlite:{db}")
    assert applied.returncode == 0, applied.stderr
    memory = mcp_agent.memory_store(db)
    # m_best (the contaminated answer the agent saved) is quarantined, and rewritten by
    # replaying the step that saved it (rule 8): the corrected answer under a new id
    assert mcp_agent.remembered(memory) == {
        "m_price_c": POISONED["m_price_c"],
        "m_n001": "Ordered the P0199 headset at StoreC for $63.99, the cheapest."}

    # asked again, the agent answers from the repaired memory
    asked = len(double.requests)
    again = mcp_agent.run(NoOpTracer(), openai.OpenAI(base_url=recorded.base_url,
                                                      api_key="test"),
                          memory, "conv-order-2", [], log)
    assert again == "Ordered the P0199 headset at StoreC for $63.99, the cheapest."
    prompt = double.requests[asked]["messages"][0]["content"]
    assert "$63.99" in prompt and "$59.99" not in prompt


def test_undeclared_tools_stop_and_a_failing_tool_leaves_its_step_unresolved(
        recorded: Recorded, cli: Cli, tmp_path: Path) -> None:
    """Classes declared, but no implementation: the price check cannot run here, so it is
    unresolved, and so is what depends on it (the order is never reached)."""
    declared = tmp_path / "only_classes.json"
    declared.write_text(json.dumps({"tools": {"get_price": "read_only",
                                              "place_order": "idempotent"}}))
    code, report = repair(cli, "--tools", str(declared))
    assert code == 4 and report["status"] == "partial"
    reasons = report["unresolved"]
    action = next(s for s, why in reasons.items() if "get_price cannot run here" in why)
    assert any(why == f"its action {action} is unresolved" for why in reasons.values())
    assert report["answer"] is None and calls(recorded.log)[3:] == []


def test_the_tools_file_rejects_an_unknown_class(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "tools.toml"
    bad.write_text('[tools]\nget_price = "harmless"\n')
    done = cli("repair", "--task", "anything", "--tools", str(bad))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("ConfigError: tool 'get_price': unknown side-effect class")


def test_a_partial_repair_is_continued_reusing_what_it_resolved(
        recorded: Recorded, cli: Cli, tmp_path: Path) -> None:
    """`--max-calls` stops the model half-way (partial); `--continue` regenerates only what
    stayed unresolved (the price check is not sent again), stops before the order and the
    email, and the approved resume finishes it: three runs, each adding to the one before."""
    log = recorded.log
    tools = str(tools_file(tmp_path / "tools.json", log))
    code, first = repair(cli, "--tools", tools, "--max-calls", "2")
    assert code == 4 and first["status"] == "partial"
    assert first["reasoner"]["calls"] == 2
    assert first["reasoner"]["exhausted"] == "--max-calls 2 reached"
    stopped_by = [why for why in first["unresolved"].values() if "--max-calls 2" in why]
    assert len(stopped_by) == 1 and calls(log)[3:] == [("get_price", "StoreA")]
    resolved = set(first["replayed"]) - set(first["unresolved"])
    assert resolved  # the plan step and the price check

    code, second = repair(cli, "--tools", tools, "--continue")
    assert code == 3 and second["continues"] == first["run_id"]
    assert not set(second["replayed"]) & resolved  # reused, not regenerated
    assert second["counts"]["reused_steps"] == len(
        resolved & set(first["plan"]["replay_step_ids"]))
    assert calls(log)[3:] == [("get_price", "StoreA")]  # not re-run
    steps = [p["step_id"] for p in second["pending"]]
    assert len(steps) == 2

    code, done = repair(cli, "--tools", tools, "--resume", "--approve", steps[0],
                        "--approve", steps[1])
    assert code == 0 and done["status"] == "repaired" and done["continues"] == first["run_id"]
    assert [c[0] for c in calls(log)[3:]] == ["get_price", "place_order", "send_email"]
    assert done["answer"] == "Ordered the P0199 headset at StoreC for $63.99, the cheapest."
    history = json.loads(cli("history", "--task", RUN, "--json").stdout)
    assert [r["status"] for r in history] == ["partial", "needs_human", "repaired"]
    # the task as it stands: the newest run's replacements in force, none unresolved
    shown = json.loads(cli("show", "--task", RUN, "--json").stdout)["trace"]
    assert [s["content"] for s in shown if s["step_type"] == "final_answer"] == [
        done["answer"]]
    assert not [s["step_id"] for s in shown if s["content"].startswith("(unresolved")]
    # each run's patch holds what that run changed: the stop re-applied nothing
    ops = {run["run_id"]: [(o["op"], o["memory_id"]) for o in json.loads(cli(
        "patch", "--task", RUN, "--run", run["run_id"]).stdout)["operations"]]
        for run in history}
    assert ops[first["run_id"]] == [("delete", "m_price_b"), ("quarantine", "m_best")]
    assert ops[second["run_id"]] == []
    again = cli("repair", "--task", RUN)
    assert again.returncode == 0 and "already_repaired" in again.stdout
    refused = cli("repair", "--task", RUN, "--continue")
    assert refused.returncode == 2 and "nothing to continue" in refused.stderr
