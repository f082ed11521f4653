"""Every method on every replay case through the product's path (`repair_task`, the shared
executor, write-back), and `provrepair repair --method` / `provrepair methods` via the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provrepair.benchmark.cases import retask
from provrepair.benchmark.methods.common import check_case_plan
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.order import final_answer_step
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from provrepair.repair.methods import method_names
from provrepair.repair.plan.model import RepairPlan
from provrepair.repair.reasoners.offline import OfflineReasoner
from provrepair.repair.service import repair_task
from tests.conftest import Cli

CASES = sorted((Path(__file__).resolve().parent.parent / "cases" / "replay").glob("*.json"))
OFFLINE = [m for m in method_names() if m != "llm_judge"]


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_every_offline_method_repairs_every_case(falkordb_store: GraphStore, path: Path) -> None:
    raw = json.loads(path.read_text())
    for method in OFFLINE:
        task = f"{raw['task_id']}::{method}"
        case = parse_case(retask(raw, task))
        ingest_case(falkordb_store, case)
        report = repair_task(falkordb_store, task, OfflineReasoner(), method=method)
        check_case_plan(read_case(falkordb_store, task), RepairPlan.model_validate(report.plan))
        assert report.status in ("repaired", "partial", "needs_human"), (method, report.status)
        if method == "no_repair":
            final = final_answer_step(case)
            assert report.answer == (final.content if final else None)
            assert report.counts["llm_calls"] == 0
        if method == "full_reset" and report.status == "repaired":
            assert not set(report.active_memory_ids) & {m["memory_id"] for m in raw["memory_store"]}


def test_cli_lists_and_runs_the_methods(cli: Cli) -> None:
    listed = json.loads(cli("methods", "--json").stdout)
    assert [m["name"] for m in listed] == method_names()
    example = Path(__file__).resolve().parent.parent.parent / "examples" / "shopping_poisoned_price.json"
    assert cli("ingest", str(example)).returncode == 0
    judged = cli("repair", "--task", "shopping_task_014", "--method", "llm_judge")
    assert judged.returncode == 2 and judged.stderr.startswith("MethodNotRun: llm_judge needs")
    reset = cli("repair", "--task", "shopping_task_014", "--method", "full_reset", "--json")
    # a full reset forgets the tracked product too: the steps that needed it, and the answer
    # built on them, stay unresolved (partial, exit 4)
    assert reset.returncode == 4, reset.stderr
    report = json.loads(reset.stdout)
    assert report["status"] == "partial" and report["plan"]["invalidate_claim_ids"] == []
    assert "user.tracked_product" in report["unresolved"]["s_009"]
    assert report["unresolved"]["s_012"] == "its input s_011 is unresolved"
