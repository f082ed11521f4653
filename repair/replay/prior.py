"""What earlier committed runs of a task version already replayed (`repair --continue`, and
`--resume` of a stop that continued one): a continuation reuses every step they resolved and
regenerates only what stayed unresolved, so its changes add to theirs (no step or memory
written twice, no id reused).

A task version has one chain of runs (`repair` runs once; later runs only resume or continue),
so the newest committed replacement of each step is the one in force.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from provrepair.provenance.keys import task_key
from provrepair.provenance.models import ExecutionStep, MemoryRecord
from provrepair.provenance.rows import record_from_props
from provrepair.provenance.state.runs import committed_by
from provrepair.provenance.store.base import GraphStore

_REPAIR_ONLY = ("origin_run", "replaces")


@dataclass
class PriorOutcome:
    redo: frozenset[str]                                          # old step ids to regenerate
    steps: dict[str, ExecutionStep] = field(default_factory=dict)  # old id → its replacement
    added: list[ExecutionStep] = field(default_factory=list)      # observations replacing none
    memories: list[tuple[MemoryRecord, str | None]] = field(default_factory=list)  # (, replaces)

    def reused(self, old_id: str) -> ExecutionStep | None:
        return None if old_id in self.redo else self.steps.get(old_id)


def read_prior(store: GraphStore, task_id: str, run_order: list[str],
               redo: set[str]) -> PriorOutcome:
    """The committed nodes the runs in `run_order` (oldest first) wrote; `redo`: the steps the
    latest of them left unresolved."""
    rank = {run_id: i for i, run_id in enumerate(run_order)}
    rows = [r["props"] for r in store.run("list_task_nodes", {"task_key": task_key(task_id)})
            if committed_by(r["props"], rank)]
    rows.sort(key=lambda p: rank[p["origin_run"]])
    prior = PriorOutcome(frozenset(redo))
    for props in rows:  # newer runs last: their replacement wins
        record = record_from_props(_case_props(props))
        replaces = props.get("replaces")
        if isinstance(record, MemoryRecord):
            prior.memories.append((record, replaces))
        elif isinstance(record, ExecutionStep):
            if replaces is not None:
                prior.steps[replaces] = record
            else:
                prior.added.append(record)
    return prior


def _case_props(props: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if k not in _REPAIR_ONLY}
