"""Baseline "No repair" (docs/paper-notes.md §5): the failed run stays as it is.

The paper (paraphrased): the lower bound — the faulty store, trace and answer kept, an empty
plan, no cleanup or replay. Departure: none.

The plan is empty: nothing deleted, quarantined, invalidated or replayed, every step
preserved. The shared executor then keeps the recorded final answer (a plan that replays
nothing keeps it), so LLM count and replay ratio are 0.
"""

from __future__ import annotations

from provrepair.benchmark.methods.common import build_plan
from provrepair.repair.methods.base import MethodBase, MethodContext
from provrepair.repair.plan.model import RepairPlan


class NoRepair(MethodBase):
    name = "no_repair"
    description = "baseline: leave the failed run unchanged (empty plan)"

    def make_plan(self, ctx: MethodContext) -> RepairPlan:
        return build_plan(ctx.case, task_id=ctx.task_id)
