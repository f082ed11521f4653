"""The echo sweep (repair/plan/echo.py): a record that repeats a diagnosed fault's value with
no recorded edge from it is reported by `plan` as a suspected copy, and quarantined, with
that reason, by `repair --quarantine-copies`; without the flag it is left alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from provrepair.repair.plan import compute_plan
from tests.conftest import Cli

TRAVEL = Path(__file__).resolve().parents[1] / "cases" / "replay" / "paper_travel_wrong_user.json"


def with_echo(raw: dict[str, Any]) -> dict[str, Any]:
    """The travel case with m_e000: the wrong-user record m_f000 copied, no edge to it, and a
    benign record repeating the same value under another key (not a copy)."""
    fault = next(m for m in raw["memory_store"] if m["memory_id"] == "m_f000")
    echo = {**fault, "memory_id": "m_e000", "created_at": 12, "derived_from": [],
            "sufficient_from": []}
    echo.pop("fault_type", None)
    other = {**echo, "memory_id": "m_e001", "created_at": 13, "fact_key": "other_key"}
    raw["memory_store"] = [*raw["memory_store"], echo, other]
    raw.pop("evaluation")
    return raw


@pytest.fixture
def echo_case() -> dict[str, Any]:
    return with_echo(json.loads(TRAVEL.read_text(encoding="utf-8")))


def test_the_plan_reports_the_copy_and_quarantines_it_only_when_asked(
        falkordb_store: GraphStore, echo_case: dict[str, Any]) -> None:
    ingest_case(falkordb_store, parse_case(echo_case))
    task = echo_case["task_id"]
    plan, _ = compute_plan(falkordb_store, task)
    assert plan.suspected_copies == {"m_e000": "m_f000"}
    assert "m_e000" not in plan.quarantine_memory_ids and "m_e000" not in plan.affected_ids
    quarantining, _ = compute_plan(falkordb_store, task, quarantine_copies=True)
    assert quarantining.quarantine_memory_ids == [*plan.quarantine_memory_ids, "m_e000"]


def test_repair_quarantine_copies_with_the_reason(cli: Cli, tmp_path: Path,
                                                  echo_case: dict[str, Any]) -> None:
    path = tmp_path / "echo.json"
    path.write_text(json.dumps(echo_case))
    assert cli("ingest", str(path)).returncode == 0
    task = echo_case["task_id"]
    planned = cli("plan", "--task", task, "--no-record", "--json")
    assert json.loads(planned.stdout)["suspected_copies"] == {"m_e000": "m_f000"}
    text = cli("plan", "--task", task, "--no-record")
    assert "suspected copy: m_e000 asserts m_f000's value" in text.stdout
    explained = json.loads(cli("plan", "--task", task, "--no-record", "--explain", "m_e000",
                               "--json").stdout)
    assert any("suspected copy of m_f000" in d for d in explained["dispositions"])
    done = cli("repair", "--task", task, "--quarantine-copies", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert "m_e000" in report["quarantined"] and "m_e001" not in report["quarantined"]
    op = next(o for o in report["memory_patch"]["operations"] if o["memory_id"] == "m_e000")
    assert op["op"] == "quarantine" and "suspected copy of m_f000" in op["reason"]
