"""The one home of run state (provenance/state/runs.py): its predicates and transitions, and
no Cypher file or view module spelling a run status itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from provrepair.provenance.state.runs import (
    ReportStatus,
    RunStatus,
    begin_props,
    changes_memory,
    commit_props,
    is_committed_repair,
    is_finished,
    recorded_status,
    run_params,
    visible_node,
)

REPO = Path(__file__).resolve().parents[2]


def test_predicates() -> None:
    assert [s for s in RunStatus if is_finished(s)] == [
        RunStatus.PLANNED, RunStatus.REPAIRED, RunStatus.PARTIAL, RunStatus.NEEDS_HUMAN,
        RunStatus.SWEPT]
    assert [s for s in RunStatus if is_committed_repair(s)] == [
        RunStatus.REPAIRED, RunStatus.PARTIAL, RunStatus.NEEDS_HUMAN]
    # a sweep of another task's repair changed the memory, but is no repair of the task
    assert [s for s in RunStatus if changes_memory(s)] == [
        RunStatus.REPAIRED, RunStatus.PARTIAL, RunStatus.NEEDS_HUMAN, RunStatus.SWEPT]
    assert is_committed_repair("partial") and not is_committed_repair("planned")
    assert not is_finished(None) and not is_finished("aborted")
    assert ReportStatus.PARTIAL == RunStatus.PARTIAL


def test_transitions() -> None:
    assert begin_props() == {"status": "writing", "finished": False}
    assert commit_props("partial") == {"status": "partial", "finished": True}
    for status in ("writing", "aborted", "no-such"):
        with pytest.raises(ValueError):
            commit_props(status)


def test_params_are_plain_values() -> None:
    params = run_params("finished_statuses", "repair_statuses", "writing", "aborted")
    assert params == {"finished_statuses": ["needs_human", "partial", "planned", "repaired",
                                            "swept"],
                      "repair_statuses": ["needs_human", "partial", "repaired"],
                      "writing": "writing", "aborted": "aborted"}
    assert all(type(v) is str for v in params["finished_statuses"])
    with pytest.raises(KeyError):
        run_params("finished")


def test_visible_nodes_and_recorded_status() -> None:
    assert visible_node({"id": "m1"})
    assert visible_node({"origin_run": "r1", "committed": True})
    assert visible_node({"origin_run": "r1", "committed": True}, "r1")
    assert not visible_node({"origin_run": "r1", "committed": True}, "r2")
    assert not visible_node({"origin_run": "r1", "committed": False})
    assert recorded_status({"status": "deleted", "status_before": "active",
                            "status_run": "r1"}) == "active"
    assert recorded_status({"status": "active"}) == "active"


# a status as a string value (a dict key such as the page's "repaired": flag is not one)
STATUS_NAMES = "|".join(s.value for s in RunStatus)
STATUS_LITERAL = re.compile(rf"""['"]({STATUS_NAMES})['"](?!\s*:)""")


def test_no_query_or_view_module_spells_a_run_status() -> None:
    """Status sets reach Cypher as parameters; the view asks the predicates."""
    files = [*(REPO / "cypher").rglob("*.cypher"), *(REPO / "view").glob("*.py")]
    offenders = []
    for path in files:
        code = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                         if not line.lstrip().startswith(("//", "#")))
        if STATUS_LITERAL.search(code) or "finished = true" in code:
            offenders.append(str(path.relative_to(REPO)))
    assert not offenders, offenders
