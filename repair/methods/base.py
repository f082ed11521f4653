"""The method interface: plan a repair of one stored task. Replay is shared (Executor).

A method sees the stored case WITHOUT its evaluation block (`MethodContext.case`); the only
exception is a method whose `oracle_assisted` attribute is True (the MemAudit oracle variant,
docs/paper-notes.md §9 A13), which reads the vault explicitly and is labelled as such in
every benchmark table.

Every method has (defaults from `MethodBase`):
    early_cutoff: bool = True      replay may skip steps whose inputs came out unchanged
                                   (False for the ablation "without selective replay")
    oracle_assisted: bool = False  the method reads evaluation data (benchmark only)

`plan` returns the plan with what deciding it cost (`Decision`: LLM calls of LLM-judge
planning, MemAudit's counterfactual reruns — the paper's L^decision, docs/paper-notes.md §6);
the repair report carries that cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from provrepair.provenance.errors import UserError
from provrepair.provenance.models import Case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan.model import Inherited, RepairPlan
from provrepair.repair.reasoners.base import Reasoner


@dataclass
class MethodContext:
    store: GraphStore
    task_id: str
    case: Case                      # the stored case WITHOUT its evaluation block
    faults: list[str] | None        # override of the diagnosed faults
    reasoner: Reasoner              # for methods that ask an LLM to plan (LLM-judge)
    # records an earlier conversation's plan reached (a namespace repair, issue 37): seeds
    # beside the faults; only `dependency_guided` plans with them (repair/plan/namespace.py)
    inherited: Sequence[Inherited] = ()

    @property
    def fault_ids(self) -> list[str]:
        return list(dict.fromkeys(self.faults if self.faults is not None
                                  else self.case.diagnosed_faults))


@dataclass
class Decision:
    """What a method's planning cost, and how it went."""

    llm_calls: int = 0
    tokens: int = 0
    regenerations: int = 0          # steps sent to the reasoner (LLM calls with an LLM)
    failed: bool = False            # no valid plan: the case counts as failed (LLM-judge)
    notes: list[str] = field(default_factory=list)


@dataclass
class Planned:
    """A method's plan and the cost of deciding it."""

    plan: RepairPlan
    decision: Decision = field(default_factory=Decision)


class Method(Protocol):
    name: str
    description: str
    early_cutoff: bool
    oracle_assisted: bool

    def plan(self, ctx: MethodContext) -> Planned:
        """The rollback plan this method applies (same fields as ours), with its cost."""
        ...


class MethodBase:
    """Defaults of the attributes; every method in this package derives from it. A method
    whose planning costs nothing implements `make_plan`; one that asks an LLM or reruns the
    agent overrides `plan` and reports its `Decision`."""

    name = ""
    description = ""
    early_cutoff = True
    oracle_assisted = False

    def plan(self, ctx: MethodContext) -> Planned:
        return Planned(self.make_plan(ctx))

    def make_plan(self, ctx: MethodContext) -> RepairPlan:
        raise NotImplementedError(f"{type(self).__name__} implements neither plan nor make_plan")


class MethodNotRun(UserError):
    """The method cannot run in this configuration (e.g. LLM-judge without an LLM); nothing
    was planned or written. The benchmark reports the pair as "not run"."""
