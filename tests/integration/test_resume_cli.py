"""`provrepair repair` stopping before a side effect (exit 3) and `--resume` after a person
decided, through the real console script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli

CASE = Path(__file__).resolve().parent.parent / "cases" / "replay" / "small_side_effect_needs_human.json"
TASK = json.loads(CASE.read_text())["task_id"]


@pytest.fixture
def cli(engine_cli: Cli) -> Cli:
    """These tests run on both engines (Neo4j where a Docker engine answers)."""
    return engine_cli


def test_stop_then_resume_with_approval(cli: Cli) -> None:
    assert cli("ingest", str(CASE)).returncode == 0
    stopped = cli("repair", "--task", TASK)
    assert stopped.returncode == 3, stopped.stderr
    assert "--resume --approve s_003" in stopped.stdout
    shown = json.loads(cli("show", "--task", TASK, "--json").stdout)
    assert {m["memory_id"]: m["status"] for m in shown["memory_store"]}["m_f002"] == "deleted"
    again = cli("repair", "--task", TASK, "--json")  # still waiting for the person
    assert again.returncode == 3 and json.loads(again.stdout)["status"] == "needs_human"
    done = cli("repair", "--task", TASK, "--resume", "--approve", "s_003", "--json")
    # committed; partial (exit 4): the case's world records no result for the refund call
    assert done.returncode == 4, done.stderr
    assert json.loads(done.stdout)["status"] == "partial"
    history = json.loads(cli("history", "--task", TASK, "--json").stdout)
    assert [r["status"] for r in history] == ["needs_human", "partial"]


def test_bad_resume_options_are_one_line(cli: Cli) -> None:
    assert cli("ingest", str(CASE)).returncode == 0
    for args, error in ((["--approve", "s_003"], "InputError: --approve and --skip go with"),
                        (["--resume"], "NothingToResume: task"),
                        (["--resume", "--dry-run"], "InputError: --resume and --continue carry on")):
        result = cli("repair", "--task", TASK, *args)
        assert result.returncode == 2, result.stdout
        assert result.stderr.startswith(error) and len(result.stderr.splitlines()) == 1


def test_show_and_history_agree_after_a_repair(cli: Cli) -> None:
    from tests.helpers import EXAMPLE

    assert cli("ingest", str(EXAMPLE)).returncode == 0
    report = json.loads(cli("repair", "--task", "shopping_task_014", "--json").stdout)
    shown = cli("show", "--task", "shopping_task_014").stdout
    history = json.loads(cli("history", "--task", "shopping_task_014", "--json").stdout)
    assert [r["run_id"] for r in history if r["status"] == "repaired"] == [report["run_id"]]
    assert f"repaired by run {report['run_id']}: answer now {report['answer']!r}" in shown
    case = json.loads(cli("show", "--task", "shopping_task_014", "--json").stdout)
    statuses = {m["memory_id"]: m["status"] for m in case["memory_store"]}
    assert all(statuses[m] == "deleted" for m in report["deleted"])


def test_show_is_the_task_as_repaired_and_original_as_recorded(cli: Cli) -> None:
    from tests.helpers import EXAMPLE

    assert cli("ingest", str(EXAMPLE)).returncode == 0
    recorded = json.loads(EXAMPLE.read_text())
    before = json.loads(cli("show", "--task", "shopping_task_014", "--json").stdout)
    assert before["trace"] == json.loads(cli("show", "--task", "shopping_task_014", "--original",
                                             "--json").stdout)["trace"]
    report = json.loads(cli("repair", "--task", "shopping_task_014", "--json").stdout)
    now = json.loads(cli("show", "--task", "shopping_task_014", "--json").stdout)
    original = json.loads(cli("show", "--task", "shopping_task_014", "--original",
                              "--json").stdout)
    assert [s["step_id"] for s in original["trace"]] == [s["step_id"] for s in recorded["trace"]]
    assert now["trace"][-1]["content"] == report["answer"]
    assert [s["step_id"] for s in now["trace"]] == [
        report["replayed"].get(s["step_id"], s["step_id"]) for s in original["trace"]]
    statuses = {m["memory_id"]: m["status"] for m in now["memory_store"]}
    assert statuses["m_f003"] == "deleted" and statuses[report["new_memory_ids"][0]] == "active"
