"""The engine's two planners behind the method interface, and the echo sweep acting on one.

    paper              the paper's plan: docs/method.md §1-4, rules 1-7 (the spec)
    dependency_guided  ours, the default: the paper's plan and rule 8 (a quarantined record's
                       writer is replayed, so the record is rewritten, not only withdrawn)
"""

from __future__ import annotations

from provrepair.provenance.store.base import GraphStore
from provrepair.repair.methods.base import Method, MethodBase, MethodContext, Planned
from provrepair.repair.plan import PlanTrace, compute_plan
from provrepair.repair.plan.echo import with_copies
from provrepair.repair.plan.model import RepairPlan


class DependencyGuided(MethodBase):
    name = "dependency_guided"
    description = ("ours: seeds, contamination reach, independent support, rule-guided plan "
                   "with rule 8 (a quarantined record is rewritten)")
    rewrite_quarantined = True

    def compute(self, store: GraphStore, task_id: str,
                faults: list[str] | None) -> tuple[RepairPlan, PlanTrace]:
        """The plan and what the planner found (for `plan --explain`)."""
        return compute_plan(store, task_id, faults, rewrite_quarantined=self.rewrite_quarantined)

    def make_plan(self, ctx: MethodContext) -> RepairPlan:
        return compute_plan(ctx.store, ctx.task_id, ctx.faults,
                            rewrite_quarantined=self.rewrite_quarantined,
                            inherited=ctx.inherited)[0]


class Paper(DependencyGuided):
    name = "paper"
    description = "the paper's method: the same plan without rule 8 (docs/method.md §4)"
    rewrite_quarantined = False


class QuarantiningCopies(MethodBase):
    """`inner`, with the records its plan reports as `suspected_copies` quarantined too (the
    echo sweep, repair/plan/echo.py; `provrepair repair --quarantine-copies`)."""

    def __init__(self, inner: Method, name: str | None = None, description: str | None = None):
        self.inner = inner
        self.name = name or inner.name
        self.description = description or f"{inner.description}; suspected copies quarantined"
        self.early_cutoff, self.oracle_assisted = inner.early_cutoff, inner.oracle_assisted

    def plan(self, ctx: MethodContext) -> Planned:
        planned = self.inner.plan(ctx)
        plan = planned.plan
        return Planned(with_copies(plan, plan.suspected_copies, quarantine=True), planned.decision)
