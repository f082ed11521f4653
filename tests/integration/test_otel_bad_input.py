"""Bad outside input through the real CLI (issue 36): one line `Type: message`, exit 2,
nothing stored; a stream refused on a bad line gives its task's lock back (the next writer
of the task is not held off). tests/unit/test_otlp_limits.py has every bad shape; these are
the command's contract on a few."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provrepair.provenance.lock import lock_holder
from provrepair.provenance.store.base import GraphStore
from tests.conftest import Cli

TRACE, SPAN = "ab" * 16, "cd" * 8
CHAT = {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}


def doc(**fields: object) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": TRACE, "spanId": SPAN, "startTimeUnixNano": "1000", "attributes": [CHAT],
         **fields}]}]}]})


@pytest.mark.parametrize(("text", "needle"), [
    ('{"resourceSpans": "abc"}', "no resourceSpans list"),
    (doc(traceId=12345), "is not an OTLP/JSON id"),
    (doc(startTimeUnixNano="9" * 400), "at most 20 digits"),
    (doc(attributes=[CHAT, {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
        [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c", "name": "f",
                                          "arguments": "[" * 5000 + "]" * 5000}]}])}}]),
     "nested too deeply"),
], ids=["resourceSpans-a-string", "integer-trace-id", "400-digit-time", "deep-arguments"])
def test_bad_otlp_is_one_line_exit_2_nothing_stored(cli: Cli, tmp_path: Path, text: str,
                                                    needle: str) -> None:
    path = tmp_path / "trace.json"
    path.write_text(text)
    done = cli("ingest", "--from", "otel", str(path))
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("InputError: ") and needle in line
    assert json.loads(cli("tasks", "--json").stdout) == []


def test_a_refused_stream_gives_its_tasks_lock_back(cli: Cli, falkordb_store: GraphStore,
                                                    tmp_path: Path) -> None:
    events = [{"kind": "task", "task_id": "t", "domain": "d"},
              {"kind": "user_input", "input_id": "u1", "task_id": "t", "turn": 1,
               "content": "hi", "timestamp": 1},
              {"kind": "step", "task_id": "t", "step_id": "s1"}]  # refused: fields missing
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    done = cli("ingest", "--follow", str(path))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert f"{path}:3" in done.stderr
    assert lock_holder(falkordb_store, "t") is None  # the next writer may take the task
    again = cli("ingest", "--follow", str(path))  # not "being recorded by …"
    assert again.returncode == 2 and "TaskConflict" not in again.stderr
