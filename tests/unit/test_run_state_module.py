"""The one home of run state (provenance/state/runs.py): its predicates and transitions (that
no product file spells a status or the visibility rule itself: test_state_guard.py)."""

from __future__ import annotations

import pytest

from provrepair.provenance.state.runs import (
    ReportStatus,
    RunStatus,
    begin_props,
    changes_memory,
    commit_props,
    committed_by,
    is_committed_repair,
    is_finished,
    pending_props,
    recorded_status,
    run_params,
    visible_node,
    wrote_replay,
)


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


def test_a_node_a_run_writes_is_pending_until_it_commits() -> None:
    pending = pending_props("r1")
    assert not visible_node(pending) and not committed_by(pending, {"r1"})
    committed = {**pending, "committed": True}  # what @commit(n) sets
    assert visible_node(committed) and committed_by(committed, {"r1", "r2"})
    assert not committed_by(committed, {"r2"}) and not committed_by({"id": "m1"}, {"r1"})


def test_which_runs_wrote_a_replay() -> None:
    # a needs_human stop applies only its memory side; a plan or a sweep replays nothing
    assert [s for s in RunStatus if wrote_replay(s)] == [RunStatus.REPAIRED, RunStatus.PARTIAL]
