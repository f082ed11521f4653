"""Writers of one task serialize (provenance/lock.py), ordered by barriers, never by sleeps.

Each test starts a first writer that stops at a named checkpoint (tests/hooked_cli.py,
provenance/checkpoints.py: it creates `<name>.reached` and waits for `<name>.release`), runs
a second writer to the
end while the first is held there, then releases the first. Iterations:
PROVREPAIR_LOCK_ITERATIONS (default 1: the barriers fix the interleaving, so a second
iteration in `make test` replayed the same one; `make test-lock` runs 20 to shake out
anything the barriers do not order).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests import hooked_cli
from tests.conftest import Cli
from tests.helpers import EXAMPLE, example_raw

TASK = "shopping_task_014"
ITERATIONS = range(int(os.environ.get("PROVREPAIR_LOCK_ITERATIONS", "1")))


@pytest.fixture
def cli(engine_cli: Cli) -> Cli:
    """These tests run on both engines (Neo4j where a Docker engine answers)."""
    return engine_cli


@contextmanager
def held_at(cli: Cli, barrier: Path, point: str, *args: str) -> Iterator[subprocess.Popen[str]]:
    """A `provrepair` process held at checkpoint `point` for the duration of the block; on
    exit it is released and runs to its end (its output stays readable on the Popen)."""
    env = {**cli.env, "HOOK_WAIT_AT": point, "HOOK_BARRIER": str(barrier)}
    first = subprocess.Popen(hooked_cli.command(*args), text=True, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: (barrier / f"{point}.reached").exists() or first.poll() is not None)
        assert first.poll() is None, first.communicate()
        yield first
    finally:
        (barrier / f"{point}.release").touch()
        first.wait(timeout=120)


def wait_until(condition: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition never became true"
        time.sleep(0.01)


def changed_version(tmp_path: Path) -> Path:
    raw = example_raw()
    raw["session"][0]["content"] += " (second version)"
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(raw))
    return path


def history(cli: Cli) -> list[str]:
    return [r["status"] for r in json.loads(cli("history", "--task", TASK, "--json").stdout)]


def task_row(cli: Cli) -> dict[str, Any]:
    rows = json.loads(cli("tasks", "--json").stdout)
    return next(r for r in rows if r["task_id"] == TASK)


def refused(result: subprocess.CompletedProcess[str], doing: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.startswith("TaskConflict: ") and doing in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("iteration", ITERATIONS)
def test_a_second_repair_waits_its_turn_and_finds_the_task_repaired(
        cli: Cli, tmp_path: Path, iteration: int) -> None:
    """The old race: both check "already repaired" before either holds the lock."""
    assert cli("ingest", str(EXAMPLE)).returncode == 0
    with held_at(cli, tmp_path, "before_lock", "repair", "--task", TASK, "--json") as first:
        second = cli("repair", "--task", TASK, "--json")
        assert second.returncode == 0, second.stderr
        assert json.loads(second.stdout)["status"] == "repaired"
    out, err = first.communicate()
    assert first.returncode == 0, err
    assert json.loads(out)["status"] == "already_repaired"
    assert history(cli).count("repaired") == 1


@pytest.mark.parametrize("iteration", ITERATIONS)
def test_repair_holding_the_task_refuses_a_replace_then_the_replace_runs(
        cli: Cli, tmp_path: Path, iteration: int) -> None:
    assert cli("ingest", str(EXAMPLE)).returncode == 0
    v2 = changed_version(tmp_path)
    with held_at(cli, tmp_path, "after_lock", "repair", "--task", TASK, "--json") as first:
        refused(cli("ingest", "--replace", str(v2)), "being repaired")
        refused(cli("repair", "--task", TASK), "being repaired")
    assert first.returncode == 0, first.communicate()
    assert history(cli) == ["repaired"]
    assert cli("ingest", "--replace", str(v2)).returncode == 0
    assert history(cli) == []  # the new version has no repair yet
    assert json.loads(cli("repair", "--task", TASK, "--json").stdout)["status"] == "repaired"


@pytest.mark.parametrize("iteration", ITERATIONS)
def test_replace_holding_the_task_refuses_a_repair_and_a_second_replace(
        cli: Cli, tmp_path: Path, iteration: int) -> None:
    assert cli("ingest", str(EXAMPLE)).returncode == 0
    v2 = changed_version(tmp_path)
    reference = task_row(cli)
    with held_at(cli, tmp_path, "ingest_before_swap", "ingest", "--replace", str(v2)) as first:
        refused(cli("repair", "--task", TASK), "being ingested")
        refused(cli("ingest", "--replace", str(EXAMPLE)), "being ingested")
        refused(cli("delete", "--task", TASK), "being ingested")
    assert first.returncode == 0, first.communicate()
    row = task_row(cli)
    assert row["complete"] is True
    assert (row["steps"], row["memories"]) == (reference["steps"], reference["memories"])
    assert history(cli) == []
    shown = json.loads(cli("show", "--task", TASK, "--json").stdout)
    assert shown["session"][0]["content"].endswith("(second version)")


def test_delete_removes_the_task_and_is_refused_while_a_repair_holds_it(
        cli: Cli, tmp_path: Path) -> None:
    assert cli("ingest", str(EXAMPLE)).returncode == 0
    with held_at(cli, tmp_path, "after_lock", "repair", "--task", TASK):
        refused(cli("delete", "--task", TASK), "being repaired")
    deleted = cli("delete", "--task", TASK, "--json")
    assert deleted.returncode == 0, deleted.stderr
    assert json.loads(deleted.stdout)["nodes"] > 0
    assert all(r["task_id"] != TASK for r in json.loads(cli("tasks", "--json").stdout))
    gone = cli("delete", "--task", TASK)
    assert gone.returncode == 2 and gone.stderr.startswith("TaskNotFound: ")
