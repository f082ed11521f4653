"""Every writer of a task takes its lock, and the lock leaves nothing behind (issue 25).

A live recording (`ingest --follow`) holds the lock from its first event to its `end`: a
`delete` or `ingest --replace` meanwhile is refused naming it (they used to succeed, and the
follow then completed a task with part of its events). A release deletes the lock node, and
an error inside a locked block is the one reported, not the release that fails after it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.errors import StoreUnavailable, TaskConflict
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.keys import task_key
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.reasoners.offline import OfflineReasoner
from provrepair.repair.service import repair_task
from tests.conftest import Cli
from tests.helpers import EXAMPLE, canonical, example_case, example_raw
from tests.integration.test_recorder import case_without_evaluation, events_in_time_order


@pytest.fixture
def cli(engine_cli: Cli) -> Cli:
    """The console script on the engine the test's `store` reads (both engines)."""
    return engine_cli


@pytest.fixture
def store(engine_cli: Cli, request: pytest.FixtureRequest) -> GraphStore:
    """The store the CLI writes to: the same engine and graph or database."""
    name = "neo4j_store" if "PROVREPAIR_URI" in engine_cli.env else "falkordb_store"
    found: GraphStore = request.getfixturevalue(name)
    return found


def lines(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def wait_for(condition: Any, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_delete_and_replace_during_a_follow_are_refused(cli: Cli, store: GraphStore,
                                                        tmp_path: Path) -> None:
    case = case_without_evaluation()
    events = [*events_in_time_order(case), {"kind": "end", "task_id": case.task_id}]
    stream = tmp_path / "events.jsonl"
    stream.write_text(lines(events[:8]))
    exe = Path(sys.executable).with_name("provrepair")
    follow = subprocess.Popen([str(exe), "ingest", "--follow", str(stream), "--json"],
                              env=cli.env, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    try:
        wait_for(lambda: store.run("get_task", {"task_key": task_key(case.task_id)}),
                 "the follow's first flush")
        deleted = cli("delete", "--task", case.task_id)
        assert deleted.returncode == 2
        assert deleted.stderr.startswith("TaskConflict: ") and "being recorded" in deleted.stderr
        version = tmp_path / "version.json"
        version.write_text(json.dumps(example_raw()))
        replaced = cli("ingest", "--replace", str(version))
        assert replaced.returncode == 2 and "being recorded" in replaced.stderr
        with stream.open("a") as handle:
            handle.write(lines(events[8:]))
        out, err = follow.communicate(timeout=120)
    finally:
        follow.kill()
    assert follow.returncode == 0, err
    assert json.loads(out)["closed_tasks"] == [case.task_id]
    assert canonical(read_case(store, case.task_id)) == canonical(case)
    assert cli("delete", "--task", case.task_id).returncode == 0  # the lock went with the end


def test_repair_of_a_missing_task_and_delete_leave_no_lock_node(cli: Cli,
                                                                 store: GraphStore) -> None:
    assert cli("repair", "--task", "no_such_task").returncode == 2
    assert store.run("get_task_lock", {"task_key": task_key("no_such_task")}) == []
    assert cli("ingest", str(EXAMPLE)).returncode == 0
    assert cli("repair", "--task", "shopping_task_014").returncode == 0
    assert cli("delete", "--task", "shopping_task_014").returncode == 0
    assert store.run("get_task_lock", {"task_key": task_key("shopping_task_014")}) == []


def test_an_empty_task_id_is_refused(cli: Cli, tmp_path: Path) -> None:
    raw = example_raw()
    for record in [raw, *raw["session"], *raw["memory_store"], *raw["trace"]]:
        record["task_id"] = ""
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(raw))
    for result in (cli("ingest", str(path)),
                   cli("ingest", "--follow", "-", input=b'{"kind": "task", "task_id": ""}\n')):
        assert result.returncode == 2
        assert result.stderr.startswith("CaseError: ") and "task_id" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_repair_with_other_faults_of_a_repaired_version_is_refused(store: GraphStore) -> None:
    case = example_case()
    ingest_case(store, case)
    first = repair_task(store, case.task_id, OfflineReasoner())
    assert first.status == "repaired"
    same = repair_task(store, case.task_id, OfflineReasoner(), faults=case.diagnosed_faults)
    assert same.status == "already_repaired" and same.run_id == first.run_id
    other = next(m.memory_id for m in case.memory_store if m.memory_id not in case.diagnosed_faults)
    with pytest.raises(TaskConflict, match=f"already repaired .*not {other}"):
        repair_task(store, case.task_id, OfflineReasoner(), faults=[other])


class DiesAt:
    """The real store until statement `query` runs: from then on every statement fails, as
    they do once the server died (fault injection; every statement before ran for real)."""

    def __init__(self, store: GraphStore, query: str):
        self.store, self.query, self.dead = store, query, False

    def run(self, name: str, params: Any = None) -> Any:
        self.dead = self.dead or name == self.query
        if self.dead:
            raise StoreUnavailable(f"query cypher/{name}.cypher failed: Connection refused")
        return self.store.run(name, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def test_a_repair_whose_server_died_names_the_failing_statement(store: GraphStore) -> None:
    case = example_case()
    ingest_case(store, case)
    with pytest.raises(StoreUnavailable) as raised:
        repair_task(DiesAt(store, "list_task_node_ids"), case.task_id,  # type: ignore[arg-type]
                    OfflineReasoner())
    assert "list_task_node_ids" in str(raised.value)
    assert "release_task_lock" not in str(raised.value)
