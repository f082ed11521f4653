"""Rule 8 (repair/plan/rules.py, beyond the paper): the step that wrote a quarantined record is
replayed, so the record is rewritten instead of only withdrawn.

The case is a generated benchmark case recorded at fidelity 0.8 (seed 42, shopping_task_038):
the final answer lost its citation of the consolidated "best offer" record m_017, which was
derived from the poisoned price m_f010 and is quarantined. Its consolidation s_035 is
invalidated but, in the recorded graph, reaches no final answer: the paper's plan leaves it
suspicious (not replayed) and nothing is recorded reading m_017, so the answer finds no best
offer and comes out unresolved. Rule 8 replays s_035 and the answer recovers.
"""

from __future__ import annotations

import json
from pathlib import Path

from provrepair.benchmark.labels import contains_all
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from provrepair.repair.plan import compute_plan
from provrepair.repair.plan.explain import explain
from provrepair.repair.reasoners.offline import OfflineReasoner
from provrepair.repair.service import repair_task
from tests.conftest import Cli

CASE = Path(__file__).resolve().parents[1] / "cases" / "rewrite" / \
    "shopping_quarantined_record_rewritten.json"
REQUIRED = ["StoreD at $120.99", "P0428", "$190.99", "$193.99"]  # the clean answer's facts


def test_the_writer_of_a_quarantined_record_is_replayed_and_the_answer_recovers(
        falkordb_store: GraphStore) -> None:
    case = parse_case(json.loads(CASE.read_text(encoding="utf-8")))
    ingest_case(falkordb_store, case)
    plan, trace = compute_plan(falkordb_store, case.task_id)
    assert plan.quarantine_memory_ids == ["m_017"]
    assert "s_035" in plan.replay_step_ids and "s_035" not in plan.answer_relevant_ids
    assert "s_035" not in plan.suspicious_step_ids
    why = explain(plan, trace, "s_035")["replay"]
    assert "quarantined record m_017" in why and "rule 8" in why

    report = repair_task(falkordb_store, case.task_id, OfflineReasoner())
    assert report.status == "repaired" and report.answer is not None
    assert contains_all(report.answer, REQUIRED)


def test_the_papers_method_leaves_the_record_withdrawn_and_the_answer_unresolved(
        falkordb_store: GraphStore) -> None:
    """`paper` (docs/method.md without rule 8): s_035 suspicious, not replayed; m_017 stays
    quarantined with nothing in its place. The rest of the plan is ours, and --explain gives
    no rule-8 reason."""
    case = parse_case(json.loads(CASE.read_text(encoding="utf-8")))
    ingest_case(falkordb_store, case)
    ours, _ = compute_plan(falkordb_store, case.task_id)
    papers, trace = compute_plan(falkordb_store, case.task_id, rewrite_quarantined=False)
    assert papers == ours.model_copy(update={
        "replay_step_ids": [s for s in ours.replay_step_ids if s != "s_035"],
        "suspicious_step_ids": sorted([*ours.suspicious_step_ids, "s_035"])})
    assert "rule 8" not in explain(papers, trace, "s_035")["replay"]
    report = repair_task(falkordb_store, case.task_id, OfflineReasoner(), method="paper",
                         dry_run=True)
    assert report.answer is None
    assert "best_offer" in report.unresolved["s_038"]


def test_plan_and_repair_take_the_papers_method(cli: Cli) -> None:
    assert cli("ingest", str(CASE)).returncode == 0
    task = json.loads(CASE.read_text(encoding="utf-8"))["task_id"]
    shown = cli("plan", "--task", task, "--method", "paper", "--json")
    assert shown.returncode == 0, shown.stderr
    assert "s_035" in json.loads(shown.stdout)["suspicious_step_ids"]
    history = json.loads(cli("history", "--task", task, "--json").stdout)
    assert [r["method"] for r in history] == ["paper"]
    repaired = cli("repair", "--task", task, "--method", "paper", "--json")
    assert repaired.returncode == 4, repaired.stderr  # partial: the answer stays unresolved
