"""Ours (dependency-guided rollback repair) and its planner-level ablation."""

from __future__ import annotations

from provrepair.repair.methods.base import MethodBase, MethodContext
from provrepair.repair.plan import compute_plan
from provrepair.repair.plan.model import RepairPlan


class DependencyGuided(MethodBase):
    name = "dependency_guided"
    description = "ours: seeds, contamination reach, independent support, rule-guided plan"

    def make_plan(self, ctx: MethodContext) -> RepairPlan:
        return compute_plan(ctx.store, ctx.task_id, ctx.faults)[0]


class WithoutSupportCheck(MethodBase):
    name = "no_support_check"
    description = "ablation: P_sup = ∅ (every affected candidate is invalidated)"

    def make_plan(self, ctx: MethodContext) -> RepairPlan:
        return compute_plan(ctx.store, ctx.task_id, ctx.faults, support_check=False)[0]
