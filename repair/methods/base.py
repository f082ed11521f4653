"""The method interface: plan a repair of one stored task. Replay is shared (Executor).

A method sees the stored case WITHOUT its evaluation block (`MethodContext.case`); the only
exception is a method whose `oracle_assisted` attribute is True (the MemAudit oracle variant,
docs/paper-notes.md §9 A13), which reads the vault explicitly and is labelled as such in
every benchmark table.

Optional method attributes, read with `getattr` by their users:
    early_cutoff: bool = True      replay may skip steps whose inputs came out unchanged
                                   (False for the ablation "without selective replay")
    oracle_assisted: bool = False  the method reads evaluation data (benchmark only)

Decisions that cost LLM calls (LLM-judge planning, MemAudit's counterfactual reruns) are
logged per (method, task) with `record_decision`; the benchmark runner takes them with
`take_decision` after the repair (the paper's L^decision, docs/paper-notes.md §6).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from provrepair.provenance.errors import UserError
from provrepair.provenance.models import Case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan.model import RepairPlan
from provrepair.repair.reasoners.base import Reasoner


@dataclass
class MethodContext:
    store: GraphStore
    task_id: str
    case: Case                      # the stored case WITHOUT its evaluation block
    faults: list[str] | None        # override of the diagnosed faults
    reasoner: Reasoner              # for methods that ask an LLM to plan (LLM-judge)

    @property
    def fault_ids(self) -> list[str]:
        return list(dict.fromkeys(self.faults if self.faults is not None
                                  else self.case.diagnosed_faults))


class Method(Protocol):
    name: str
    description: str

    def plan(self, ctx: MethodContext) -> RepairPlan:
        """The rollback plan this method applies (same fields as ours)."""
        ...


class MethodNotRun(UserError):
    """The method cannot run in this configuration (e.g. LLM-judge without an LLM); nothing
    was planned or written. The benchmark reports the pair as "not run"."""


@dataclass
class Decision:
    """What a method's planning cost, and how it went."""

    llm_calls: int = 0
    tokens: int = 0
    regenerations: int = 0          # steps sent to the reasoner (LLM calls with an LLM)
    failed: bool = False            # no valid plan: the case counts as failed (LLM-judge)
    notes: list[str] = field(default_factory=list)


_DECISIONS: dict[tuple[str, str], Decision] = {}


def record_decision(method: str, task_id: str, decision: Decision) -> None:
    _DECISIONS[(method, task_id)] = decision


def take_decision(method: str, task_id: str) -> Decision:
    """The decision logged for this pair (removed from the log), or an empty one."""
    return _DECISIONS.pop((method, task_id), Decision())
