"""Ours (dependency-guided rollback repair) and its planner-level ablation."""

from __future__ import annotations

from provrepair.repair.methods.base import Method, MethodBase, MethodContext, Planned
from provrepair.repair.plan import compute_plan
from provrepair.repair.plan.echo import with_copies
from provrepair.repair.plan.model import RepairPlan


class DependencyGuided(MethodBase):
    name = "dependency_guided"
    description = "ours: seeds, contamination reach, independent support, rule-guided plan"

    def make_plan(self, ctx: MethodContext) -> RepairPlan:
        return compute_plan(ctx.store, ctx.task_id, ctx.faults, inherited=ctx.inherited)[0]


class WithoutSupportCheck(MethodBase):
    name = "no_support_check"
    description = "ablation: P_sup = ∅ (every affected candidate is invalidated)"

    def make_plan(self, ctx: MethodContext) -> RepairPlan:
        return compute_plan(ctx.store, ctx.task_id, ctx.faults, support_check=False)[0]


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
