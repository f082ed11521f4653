"""A task version is repaired once, whatever `plan`, `repair` and `ingest` ran in between."""

from __future__ import annotations

from typing import Any

from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.keys import task_key
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan import compute_plan
from provrepair.repair.reasoners.offline import OfflineReasoner
from provrepair.repair.runs import list_runs, record_plan_run
from provrepair.repair.service import RepairReport, repair_task
from tests.helpers import example_case, example_raw


def repair(store: GraphStore, task_id: str) -> RepairReport:
    return repair_task(store, task_id, OfflineReasoner())


def written_by_repairs(store: GraphStore, task_id: str) -> list[dict[str, Any]]:
    rows = store.run("list_task_nodes", {"task_key": task_key(task_id)})
    return sorted((r["props"] for r in rows if "origin_run" in r["props"]), key=lambda p: p["id"])


def statuses(store: GraphStore, task_id: str) -> list[str]:
    return [r["status"] for r in list_runs(store, task_id)]


def test_repair_plan_repair_repairs_once(store: GraphStore) -> None:
    case = example_case()
    ingest_case(store, case)
    first = repair(store, case.task_id)
    assert first.status == "repaired"
    after_first = written_by_repairs(store, case.task_id)
    record_plan_run(store, compute_plan(store, case.task_id)[0], method="dependency_guided")
    second = repair(store, case.task_id)
    assert second.status == "already_repaired"
    assert second.run_id == first.run_id and second.answer == first.answer
    assert written_by_repairs(store, case.task_id) == after_first
    assert statuses(store, case.task_id) == ["repaired", "planned"]


def test_repair_repair_repairs_once(store: GraphStore) -> None:
    case = example_case()
    ingest_case(store, case)
    first = repair(store, case.task_id)
    again = repair(store, case.task_id)
    assert again.status == "already_repaired" and again.new_memory_ids == first.new_memory_ids
    assert statuses(store, case.task_id) == ["repaired"]


def test_a_new_version_is_repaired_once_more_with_fresh_ids(store: GraphStore) -> None:
    case = example_case()
    ingest_case(store, case)
    assert repair(store, case.task_id).status == "repaired"
    raw = example_raw()
    raw["session"][0]["content"] += " (second version)"
    ingest_case(store, type(case).model_validate(raw), replace=True)
    assert statuses(store, case.task_id) == []  # the old version's runs went with it
    assert written_by_repairs(store, case.task_id) == []
    assert repair(store, case.task_id).status == "repaired"
    assert statuses(store, case.task_id) == ["repaired"]


def test_new_record_ids_skip_ids_stored_by_earlier_runs(store: GraphStore) -> None:
    """Ids are allocated from the store: a regenerated record of an earlier run (which the
    case read back leaves out) is never named again."""
    from provrepair.repair.replay.state import RepairState

    case = example_case()
    ingest_case(store, case)
    report = repair(store, case.task_id)
    assert report.new_memory_ids
    plan = compute_plan(store, case.task_id)[0]
    stored = [(r["id"], r["kind"])
              for r in store.run("list_task_node_ids", {"task_key": task_key(case.task_id)})]
    fresh = RepairState(case, plan, "x", stored).new_memory_id()
    assert fresh not in {node_id for node_id, _ in stored}
    assert fresh not in report.new_memory_ids
    # without the stored ids the case alone would hand out the first run's id again
    assert RepairState(case, plan, "x").new_memory_id() == report.new_memory_ids[0]
