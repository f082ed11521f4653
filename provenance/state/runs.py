"""The state of a `:RepairRun`: its statuses, its transitions and the predicates every reader
uses (the view, the Browser queries, `show`, `history`, `patch`, `repair`).

    begin  → WRITING                  the run node exists, its marks and new nodes are pending
    commit → PLANNED | REPAIRED | PARTIAL | NEEDS_HUMAN | SWEPT    one statement; finished then
    abort  → ABORTED                  a run that died while WRITING, rolled back

A run is *finished* once committed (a recorded plan counts); a *committed repair* is a
finished run that applied something to the memory store (a plan applies nothing). The
`finished` property stored on the run is derived here (`begin_props`, `commit_props`) for
readers of older stores; queries read the status sets of `run_params()` instead.

A node of a task is visible (part of the task as it stands) when it was recorded, or when a
repair that committed wrote it; what the recorded case said of a record a repair changed is
kept beside its new status (`status_before`, `status_run`: cypher/replay/commit_repair_run).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any


class RunStatus(StrEnum):
    """States of a `:RepairRun` (the transitions are in the module docstring)."""

    WRITING = "writing"          # being written; invisible until committed
    PLANNED = "planned"          # `plan`: a recorded plan, nothing applied
    REPAIRED = "repaired"        # `repair` committed
    PARTIAL = "partial"          # committed, but the final answer could not be recomputed
    NEEDS_HUMAN = "needs_human"  # `repair` stopped before a side effect; memory side applied
    ABORTED = "aborted"          # died before finishing; rolled back
    # committed: quarantined the suspected copies another task's repair found in this task
    # (the echo sweep over a memory namespace, repair/scope_sweep.py); not a repair of it
    SWEPT = "swept"


class ReportStatus(StrEnum):
    """The `status` of a repair report (`provrepair repair --json`): a committed run's status,
    or what `repair` did instead of committing one."""

    REPAIRED = RunStatus.REPAIRED.value
    PARTIAL = RunStatus.PARTIAL.value
    NEEDS_HUMAN = RunStatus.NEEDS_HUMAN.value
    ALREADY_REPAIRED = "already_repaired"  # the task version has a committed repair: not redone
    DRY_RUN = "dry_run"                    # `--dry-run`: replayed, nothing written


FINISHED = frozenset({RunStatus.PLANNED, RunStatus.REPAIRED, RunStatus.PARTIAL,
                      RunStatus.NEEDS_HUMAN, RunStatus.SWEPT})
# A committed repair of the task version: `repair` is not run twice on it.
COMMITTED_REPAIR = frozenset({RunStatus.REPAIRED, RunStatus.PARTIAL, RunStatus.NEEDS_HUMAN})
# Committed runs that changed the task's memory: what its memory patch covers (a sweep of
# another task's repair included; it does not make this version repaired).
MEMORY_CHANGING = COMMITTED_REPAIR | {RunStatus.SWEPT}
# What a report says was applied to the memory store (the run of an earlier repair included).
APPLIED_REPORT = frozenset({ReportStatus.REPAIRED, ReportStatus.PARTIAL,
                            ReportStatus.ALREADY_REPAIRED})


def is_finished(status: object) -> bool:
    return status in FINISHED


def is_committed_repair(status: object) -> bool:
    return status in COMMITTED_REPAIR


def changes_memory(status: object) -> bool:
    return status in MEMORY_CHANGING


def begin_props() -> dict[str, Any]:
    """The run's state when it is first written."""
    return {"status": RunStatus.WRITING.value, "finished": False}


def commit_props(status: RunStatus | str) -> dict[str, Any]:
    """The run's state at its commit point (ValueError: not a final status)."""
    final = RunStatus(status)
    if not is_finished(final):
        raise ValueError(f"a run cannot be committed as {final.value!r}")
    return {"status": final.value, "finished": True}


PARAMS: dict[str, Any] = {
    "finished_statuses": sorted(s.value for s in FINISHED),
    "repair_statuses": sorted(s.value for s in COMMITTED_REPAIR),
    "writing": RunStatus.WRITING.value,
    "aborted": RunStatus.ABORTED.value,
}


def run_params(*names: str) -> dict[str, Any]:
    """The named status sets and states as Cypher parameters (a query never spells them):
    finished_statuses, repair_statuses, writing, aborted."""
    return {name: PARAMS[name] for name in names}


def visible_node(props: Mapping[str, Any], run_id: str | None = None) -> bool:
    """A recorded node, or one a committed repair wrote (that of `run_id` only, when given).
    The pending nodes of a run that never committed are no part of the task."""
    origin = props.get("origin_run")
    if origin is None:
        return True
    return bool(props.get("committed")) and (run_id is None or origin == run_id)


def recorded_status(props: Mapping[str, Any]) -> Any:
    """A recorded node's status as recorded, whatever repairs changed since."""
    if props.get("status_run") is not None and "status_before" in props:
        return props["status_before"]
    return props.get("status")
