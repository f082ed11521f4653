"""The Cypher planner on hand-built cases (tests/cases/planner/expected.json): one case per
fault type and per rule, and the four case studies of the paper's appendix."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.errors import TaskNotFound
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from provrepair.repair.plan import compute_plan
from tests.conftest import Cli

CASES = Path(__file__).resolve().parent.parent / "cases" / "planner"
EXPECTED: list[dict[str, Any]] = json.loads((CASES / "expected.json").read_text())
ORDERED = {"replay_step_ids", "seeds"}


def load(entry: dict[str, Any]) -> Any:
    return parse_case(json.loads((CASES / entry["file"]).read_text()))


def assert_plan_matches(plan: dict[str, Any], expected: dict[str, Any]) -> None:
    for field, value in expected.items():
        got = plan[field]
        if field in ORDERED:
            assert got == value, field
        else:
            assert sorted(got) == sorted(value), field


@pytest.mark.parametrize("entry", EXPECTED, ids=[e["file"].removesuffix(".json") for e in EXPECTED])
def test_plan_matches_the_spec(store: GraphStore, entry: dict[str, Any]) -> None:
    case = load(entry)
    ingest_case(store, case)
    plan, _ = compute_plan(store, case.task_id, entry.get("faults"))
    assert_plan_matches(plan.model_dump(), entry["expected"])


def test_plan_command_json_on_every_case(cli: Cli) -> None:
    """`provrepair plan --task ID --json` is the user-facing contract; run it on all cases."""
    paths = sorted({str(CASES / e["file"]) for e in EXPECTED})
    assert cli("ingest", *paths).returncode == 0
    for entry in EXPECTED:
        task_id = load(entry).task_id
        args = ["plan", "--task", task_id, "--json"]
        if entry.get("faults"):
            args += ["--faults", ",".join(entry["faults"])]
        result = cli(*args)
        assert result.returncode == 0, result.stderr
        assert_plan_matches(json.loads(result.stdout), entry["expected"])


def test_a_plan_leaves_the_garbage_collector_as_it_found_it(store: GraphStore) -> None:
    """compute_plan pauses the cyclic GC while it runs (provenance/gc_pause.py): on after a
    plan, after a failing plan, and still off for a program that switched it off."""
    entry = EXPECTED[0]
    case = load(entry)
    ingest_case(store, case)
    assert gc.isenabled()
    compute_plan(store, case.task_id, entry.get("faults"))
    assert gc.isenabled()
    with pytest.raises(TaskNotFound):
        compute_plan(store, "no-such-task")
    assert gc.isenabled()
    gc.disable()
    try:
        compute_plan(store, case.task_id, entry.get("faults"))
        assert not gc.isenabled()
    finally:
        gc.enable()
