"""What the conventions allow, through the real CLI (issue 28): an unknown operation and an
inference without captured input are stored (the fallback named on stderr and on the task);
a messages attribute or a transcript in another shape is one line, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import Cli

TRACE = "ab" * 16


def otlp(*spans: tuple[str, dict[str, str]]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": TRACE, "spanId": f"{n + 1:016x}", "name": op,
         "startTimeUnixNano": str(1000 * (n + 1)),
         "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": op}},
                        *({"key": k, "value": {"stringValue": v}} for k, v in attrs.items())]}
        for n, (op, attrs) in enumerate(spans)]}]}]}


def answer(text: str) -> dict[str, str]:
    return {"gen_ai.output.messages": json.dumps(
        [{"role": "assistant", "parts": [{"type": "text", "content": text}]}])}


def test_unknown_operations_and_uncaptured_input_are_stored_with_a_warning(
        cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(otlp(
        ("chat", {**answer("Looking."), "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "Seat?"}]}])}),
        ("plan", answer("check the seat map")),
        ("chat", answer("4C")))))
    done = cli("ingest", "--from", "otel", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(f"warning: task trace-{TRACE}: 2 model output(s) without "
                                  "recorded input messages")
    case = json.loads(cli("show", "--task", f"trace-{TRACE}", "--json").stdout)
    assert [(s["step_type"], s["content"]) for s in case["trace"]] == [
        ("claim", "Looking."), ("plan", "plan: check the seat map"), ("final_answer", "4C")]
    assert case["world"]["provrepair.warnings"]


def test_other_shapes_are_one_line_exit_2_nothing_written(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(otlp(("chat", {**answer("hi"), "gen_ai.input.messages":
                                               json.dumps([{"role": "user", "content": "hi"}])}))))
    anthropic = tmp_path / "t.json"
    anthropic.write_text(json.dumps({"task_id": "t", "messages": [
        {"role": "user", "content": "seat?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "x", "name": "seat",
                                           "input": {}}]}]}))
    for source, path, needle in (("otel", trace, f"span {1:016x} of trace {TRACE}"),
                                 ("openai-messages", anthropic, "Anthropic-style")):
        done = cli("ingest", "--from", source, str(path))
        assert done.returncode == 2 and needle in done.stderr, done.stderr
        assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    assert json.loads(cli("tasks", "--json").stdout) == []
