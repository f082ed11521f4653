"""The README's walk of a shared memory ("One fault, every conversation it reached"), run as
written: three conversations of one memory, the namespace plan listing the
two affected ones, the namespace repair correcting both answers, one patch applied to a real
LangGraph SqliteStore; and a kill -9 of the namespace repair, taken up by the same command."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from provrepair.repair.namespace_patch import namespace_patch
from provrepair.repair.runs import list_runs
from tests import hooked_cli
from tests.conftest import Cli

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
EXAMPLES = REPO / "examples" / "namespace"
Result = Any  # click.testing.Result


def readme_block(marker: str) -> str:
    text = README.read_text(encoding="utf-8")
    return re.search(rf"<!-- {marker} -->\n```\w+\n(.*?)```", text, re.S).group(1)  # type: ignore[union-attr]


def langgraph_items(path: Path) -> dict[str, str]:
    import sqlite3

    from langgraph.store.sqlite import SqliteStore

    store = SqliteStore(sqlite3.connect(path, check_same_thread=False, isolation_level=None))
    return {item.key: item.value["content"] for item in store.search(("user-42",))}


def run_walk(cli: Cli) -> list[Result]:
    """Each command of the README's block, in the current folder, in this process (click's
    runner: the real commands, without a Python start per command); `> FILE` written from
    stdout."""
    from click.testing import CliRunner

    from provrepair.cli import main

    runner, done = CliRunner(), []
    for line in readme_block("namespace-walk").splitlines():
        args = shlex.split(line)
        target = None
        if ">" in args:
            args, target = args[:args.index(">")], args[args.index(">") + 1]
        assert args[0] == "provrepair"
        result = runner.invoke(main, args[1:], env=cli.env, catch_exceptions=False)
        assert result.exit_code == 0, (line, result.output)
        if target is not None:
            Path(target).write_text(result.stdout)
        done.append(result)
    return done


def test_the_readme_walk_repairs_two_conversations_and_the_langgraph_store(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    exec(readme_block("namespace-store"), {"__name__": "namespace_store"})
    _, _, plan, explained, repaired, *_ = run_walk(cli)
    assert "2 of 3 conversations reached" in plan.stdout
    assert re.findall(r"^  (conv_\d+) \(t=\d+\) s_\d+: (.*)$", plan.stdout, re.M) == [
        ("conv_01", "Your home_city: Lyon"), ("conv_02", "Saved: note on Lyon")]
    assert "conv_02: read record m_planted (m_planted) after conv_01's plan deleted it" in \
        explained.stdout
    assert "corrected answer: Your home_city: Lisbon" in repaired.stdout
    assert "corrected answer: Saved: note on Lisbon" in repaired.stdout
    assert langgraph_items(tmp_path / "agent.db") == {
        "m_home_city": "home_city: Lisbon", "m_n003": "note on Lisbon"}
    patch = json.loads((tmp_path / "patch.json").read_text())
    assert [(o["op"], o["memory_id"]) for o in patch["operations"]] == [
        ("delete", "m_planted"), ("quarantine", "m_home_city_note_2"), ("add", "m_n003")]
    assert "SHARED_RECORD" in (tmp_path / "namespace.html").read_text()


def namespace_repair(cli: Cli, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(hooked_cli.command("repair", "--namespace", "user-42", "--faults",
                                             "m_planted", "--json"),
                          capture_output=True, text=True, env={**cli.env, **env}, timeout=180)


def test_a_killed_namespace_repair_is_taken_up_by_the_same_command(
        cli: Cli, falkordb_store: GraphStore) -> None:
    """Killed (kill -9) before the first conversation's commit: the dead run of that
    conversation is rolled back, the namespace lock taken over, the run finished."""
    for path in sorted(EXAMPLES.glob("*.json")):
        ingest_case(falkordb_store, parse_case(json.loads(path.read_text())))
    killed = namespace_repair(cli, HOOK_KILL_AT="before_commit")
    assert killed.returncode == -signal.SIGKILL
    assert [r["status"] for r in list_runs(falkordb_store, "conv_01")] == ["writing"]
    rerun = namespace_repair(cli)
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert report["status"] == "repaired"
    assert [(c["task_id"], c["corrected_answer"]) for c in report["conversations"]] == [
        ("conv_01", "Your home_city: Lisbon"), ("conv_02", "Saved: note on Lisbon")]
    for task in ("conv_01", "conv_02"):
        statuses = [r["status"] for r in list_runs(falkordb_store, task)]
        assert statuses.count("repaired") == 1 and "writing" not in statuses, (task, statuses)
    patch = namespace_patch(falkordb_store, "user-42")
    assert [(o.op, o.memory_id) for o in patch.operations] == [
        ("delete", "m_planted"), ("quarantine", "m_home_city_note_2"), ("add", "m_n003")]
