"""What a run's state means, read the same everywhere (provenance/state/runs.py): a `partial`
repair is a committed repair in `view` and in the Browser's before/after query; a `plan`
recorded after a repair does not hide the repair from `view`; `show --original` shows the
records as recorded, not as a repair left them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from provrepair.provenance.state.runs import run_params
from provrepair.provenance.store.base import GraphStore
from tests.conftest import EXAMPLES, REPO, Cli

EXAMPLE = EXAMPLES / "shopping_poisoned_price.json"
TRANSCRIPT = EXAMPLES / "transcripts" / "shopping_transcript.json"
PARTIAL_TASK = "transcript_shopping_001"


def ok(done: Any) -> Any:
    assert done.returncode == 0, done.stderr
    return done


def viewed(cli: Cli, task_id: str, tmp_path: Path) -> dict[str, Any]:
    done = ok(cli("view", "--task", task_id, "--out", str(tmp_path / "v.html"), "--json"))
    info: dict[str, Any] = json.loads(done.stdout)
    return info


def partial_repair(cli: Cli) -> dict[str, Any]:
    ok(cli("ingest", "--from", "openai-messages", str(TRANSCRIPT)))
    done = cli("repair", "--task", PARTIAL_TASK, "--json")
    assert done.returncode == 4, done.stderr  # partial: no derivations to recompute the answer
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["status"] == "partial" and report["replayed"]
    return report


def test_a_partial_repair_is_drawn_after_the_repair(cli: Cli, tmp_path: Path) -> None:
    report = partial_repair(cli)
    info = viewed(cli, PARTIAL_TASK, tmp_path)
    written = len(report["replayed"]) + len(report["new_memory_ids"])
    assert info["run_id"] == report["run_id"]
    assert info["nodes_after"] == info["nodes_before"] + written > info["nodes_before"]
    page = (tmp_path / "v.html").read_text(encoding="utf-8")
    assert '"repaired":true' in page  # the page's "After repair" button is enabled


def test_a_partial_repair_in_the_browser_before_after_query(cli: Cli,
                                                            falkordb_store: GraphStore) -> None:
    report = partial_repair(cli)
    pairs = falkordb_store.run("repair_before_after", {"task_id": PARTIAL_TASK,
                                                       **run_params("repair_statuses")})
    assert {(r["old"].properties["id"], r["new"].properties["id"])
            for r in pairs} == set(report["replayed"].items())


def test_a_later_plan_does_not_hide_the_repair(cli: Cli, tmp_path: Path) -> None:
    ok(cli("ingest", str(EXAMPLE)))
    report = json.loads(ok(cli("repair", "--task", "shopping_task_014", "--json")).stdout)
    ok(cli("plan", "--task", "shopping_task_014"))
    history = json.loads(ok(cli("history", "--task", "shopping_task_014", "--json")).stdout)
    assert [r["status"] for r in history] == ["repaired", "planned"]
    info = viewed(cli, "shopping_task_014", tmp_path)
    assert info["run_id"] == report["run_id"]
    assert info["nodes_after"] > info["nodes_before"]
    plan_run = history[-1]["run_id"]
    done = ok(cli("view", "--task", "shopping_task_014", "--run", plan_run, "--out",
                  str(tmp_path / "plan.html"), "--json"))
    assert json.loads(done.stdout)["run_id"] == plan_run  # still reachable by name


def test_show_original_after_a_repair_is_as_recorded(cli: Cli) -> None:
    recorded = json.loads(EXAMPLE.read_text())
    ok(cli("ingest", str(EXAMPLE)))
    ok(cli("repair", "--task", "shopping_task_014"))
    original = json.loads(ok(cli("show", "--task", "shopping_task_014", "--original",
                                 "--json")).stdout)
    statuses = {m["memory_id"]: m["status"] for m in original["memory_store"]}
    assert statuses == {m["memory_id"]: m["status"] for m in recorded["memory_store"]}
    assert statuses["m_f003"] == "active"
    now = json.loads(ok(cli("show", "--task", "shopping_task_014", "--json")).stdout)
    assert {m["memory_id"]: m["status"] for m in now["memory_store"]}["m_f003"] == "deleted"


def test_browser_params_run_the_saved_queries(cli: Cli, falkordb_store: GraphStore) -> None:
    """The `:params` line `browser-params` prints carries what each saved query declares."""
    report = partial_repair(cli)
    line = ok(cli("browser-params", "--task", PARTIAL_TASK)).stdout.strip()
    assert line.startswith(":params {") and line.endswith("}")
    params = json.loads(re.sub(r"(\w+): ", r'"\1": ', line.removeprefix(":params ")))
    assert params == {"task_id": PARTIAL_TASK, **run_params("finished_statuses",
                                                            "repair_statuses")}
    pairs = falkordb_store.run("repair_before_after", {k: params[k] for k in (
        "task_id", "repair_statuses")})
    assert len(pairs) == len(report["replayed"])
    reach = falkordb_store.run("fault_reach", {k: params[k] for k in (
        "task_id", "finished_statuses")})
    assert reach


def test_show_original_after_a_resumed_repair_is_as_recorded(cli: Cli) -> None:
    """Two commits touch the fault (the stop applies the memory side, the resume the rest):
    the original still reads as recorded."""
    case = REPO / "tests" / "cases" / "replay" / "small_side_effect_needs_human.json"
    recorded = json.loads(case.read_text())
    ok(cli("ingest", str(case)))
    assert cli("repair", "--task", recorded["task_id"]).returncode == 3
    done = cli("repair", "--task", recorded["task_id"], "--resume", "--approve", "s_003")
    assert done.returncode == 4, done.stderr
    original = json.loads(ok(cli("show", "--task", recorded["task_id"], "--original",
                                 "--json")).stdout)
    assert {m["memory_id"]: m["status"] for m in original["memory_store"]} == {
        m["memory_id"]: m["status"] for m in recorded["memory_store"]}
