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

    write  → pending_props(run)       a node a run writes: origin_run set, not committed
    commit → `@commit(n)` in Cypher    committed with its run (cypher/replay/commit_repair_run)

The Python predicates (`visible_node`, `committed_by`) and the Cypher spellings of the same
rules (`CYPHER_RULES`, which the query files name as `@visible(n)`) live side by side here.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
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


# Committed runs that wrote a replay (new steps, regenerated records): a needs_human stop
# writes only its memory side.
WROTE_REPLAY = frozenset({RunStatus.REPAIRED, RunStatus.PARTIAL})


def wrote_replay(status: object) -> bool:
    return status in WROTE_REPLAY


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


def committed_by(props: Mapping[str, Any], run_ids: Container[str]) -> bool:
    """A node one of these runs wrote, once that run committed (not a recorded node)."""
    return props.get("origin_run") in run_ids and bool(props.get("committed"))


def pending_props(run_id: str) -> dict[str, Any]:
    """What a node a run writes carries until the run commits: no part of the task before."""
    return {"origin_run": run_id, "committed": False}


# The same rules in Cypher: a query under cypher/ names one as `@recorded(w)` (arguments are
# Cypher expressions: `@pending_of(n, $run_id)`), and the registry (provenance/store/queries.py)
# puts the text in when it loads the file, so no query spells a rule itself. Each is the
# Cypher of a predicate above (tests/integration/test_run_state_readers.py runs them on both
# engines against `visible_node`).
CYPHER_RULES: dict[str, str] = {
    # recorded by the agent: no repair run wrote it
    "recorded": "{0}.origin_run IS NULL",
    # written by a repair run, committed or not
    "repair_written": "{0}.origin_run IS NOT NULL",
    # written by the run whose id is {1}, committed or not
    "written_by": "{0}.origin_run = {1}",
    # part of the task as it stands: visible_node(props)
    "visible": "({0}.origin_run IS NULL OR {0}.committed = true)",
    # written by a repair that committed: visible and not recorded
    "committed_repair_written": "({0}.origin_run IS NOT NULL AND {0}.committed = true)",
    # written by a repair that has not committed (by the run whose id is {1})
    "pending": "({0}.origin_run IS NOT NULL AND coalesce({0}.committed, false) = false)",
    "pending_of": "({0}.origin_run = {1} AND coalesce({0}.committed, false) = false)",
    # the commit point's mark on every node the commit changes (a SET item)
    "commit": "{0}.committed = true",
}


def recorded_status(props: Mapping[str, Any]) -> Any:
    """A recorded node's status as recorded, whatever repairs changed since."""
    if props.get("status_run") is not None and "status_before" in props:
        return props["status_before"]
    return props.get("status")
