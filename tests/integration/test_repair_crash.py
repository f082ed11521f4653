"""Crash safety and concurrency of `provrepair repair` (kill -9 at several points).

The repair runs as a real subprocess; tests/hooked_cli.py (a checkpoint observer,
provenance/checkpoints.py) makes it SIGKILL itself at a named point of the write-back.
Whatever the point, the store either reads exactly as before the repair, or the repair is
complete; re-running converges.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import hooked_cli
from tests.conftest import Cli
from tests.helpers import EXAMPLE

TASK = "shopping_task_014"
BEFORE_COMMIT = ["after_lock", "after_run_record", "after_new_steps", "after_new_edges",
                 "before_commit"]


@pytest.fixture
def cli(engine_cli: Cli) -> Cli:
    """These tests run on both engines (Neo4j where a Docker engine answers)."""
    return engine_cli


def memory_states(cli: Cli) -> dict[str, str]:
    shown = json.loads(cli("show", "--task", TASK, "--json").stdout)
    return {m["memory_id"]: m["status"] for m in shown["memory_store"]}


def run_repair(cli: Cli, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(hooked_cli.command("repair", "--task", TASK, "--json"),
                          capture_output=True, text=True, env={**cli.env, **env}, timeout=120)


def outcome(report: dict[str, Any]) -> tuple[Any, ...]:
    """What a repair decides, independent of its run id."""
    return (report["answer"], report["deleted"], report["quarantined"], report["new_memory_ids"],
            report["active_memory_ids"], sorted(report["replayed"]))


@pytest.fixture(scope="module")
def clean_outcome(server_home: Path, server: Any) -> tuple[Any, ...]:
    """What an uninterrupted repair of the example decides (the same for every test)."""
    cli = Cli(server_home, "crash_reference")
    cli("ingest", "--replace", str(EXAMPLE))
    report = json.loads(run_repair(cli).stdout)
    return outcome(report)


@pytest.mark.parametrize("point", BEFORE_COMMIT)
def test_kill_before_commit_leaves_the_old_state_and_rerun_converges(
        cli: Cli, point: str, clean_outcome: tuple[Any, ...]) -> None:
    cli("ingest", str(EXAMPLE))
    before = memory_states(cli)
    killed = run_repair(cli, HOOK_KILL_AT=point)
    assert killed.returncode == -signal.SIGKILL
    assert memory_states(cli) == before  # nothing reads as repaired
    runs = json.loads(cli("history", "--task", TASK, "--json").stdout)
    assert all(r["status"] != "repaired" for r in runs)
    rerun = run_repair(cli)
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert report["status"] == "repaired"
    assert outcome(report) == clean_outcome
    assert memory_states(cli)["m_f003"] == "deleted"
    statuses = [r["status"] for r in json.loads(cli("history", "--task", TASK, "--json").stdout)]
    assert statuses.count("repaired") == 1
    assert statuses.count("writing") == 0  # the dead run was rolled back (aborted)


def test_kill_after_commit_is_a_finished_repair(cli: Cli, clean_outcome: tuple[Any, ...]) -> None:
    cli("ingest", str(EXAMPLE))
    killed = run_repair(cli, HOOK_KILL_AT="after_commit")
    assert killed.returncode == -signal.SIGKILL
    assert memory_states(cli)["m_f003"] == "deleted"
    report = json.loads(run_repair(cli).stdout)
    assert report["status"] == "already_repaired"
    assert outcome(report) == clean_outcome


def test_a_killed_repair_leaves_pending_nodes_that_prune_removes(cli: Cli) -> None:
    """Counted in the store itself, not through the read-back (which hides them)."""
    cli("ingest", str(EXAMPLE))
    recorded = task_counts(cli)
    killed = run_repair(cli, HOOK_KILL_AT="before_commit")
    assert killed.returncode == -signal.SIGKILL
    after_kill = task_counts(cli)
    assert after_kill["pending_nodes"] > 0
    assert {k: after_kill[k] for k in ("steps", "memories", "repair_nodes")} == \
        {k: recorded[k] for k in ("steps", "memories", "repair_nodes")}
    pruned = json.loads(cli("delete", "--prune", "--json").stdout)
    assert [len(r["aborted_runs"]) for r in pruned] == [1]
    assert task_counts(cli) == recorded
    assert [r["status"] for r in json.loads(cli("history", "--task", TASK, "--json").stdout)] \
        == ["aborted"]


def task_counts(cli: Cli) -> dict[str, Any]:
    rows = json.loads(cli("tasks", "--json").stdout)
    return dict(next(r for r in rows if r["task_id"] == TASK))
