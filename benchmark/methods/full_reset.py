"""Baseline "Full memory reset" (docs/method.md, Baselines; docs/paper-notes.md §5).

The paper (paraphrased): removes all active memories, then replays the final user turn under
the same agent lifecycle, the trace before it kept fixed; it removes all contaminated memory
and all benign personalization with it. Departure: none in the plan. Its recovery depends on
whether the final question can be answered without memory: in the benchmark's answerable
sessions it can fall back to the conversation (docs/benchmark.md), otherwise it cannot.

Delete every memory that is active when repair begins, then replay the final user turn
(every non-observation step of the last turn; its observations are refreshed by the replayed
actions). The trace before the final turn is kept fixed (preserved). No claim is
invalidated (a memory-centric baseline scores claim-invalidation F1 = 0, paper App. E;
docs/paper-notes.md §9 A5).

`affected_ids` names every memory of the store: the shared executor re-activates a record
superseded by a removed one unless that record is "affected", and a reset must not bring
back older versions — after a reset nothing from the old store is active.
"""

from __future__ import annotations

from provrepair.benchmark.methods.common import active_memories, build_plan, final_turn_steps
from provrepair.repair.methods.base import MethodBase, MethodContext
from provrepair.repair.plan.model import RepairPlan


class FullReset(MethodBase):
    name = "full_reset"
    description = "baseline: delete every active memory, replay the final turn"

    def make_plan(self, ctx: MethodContext) -> RepairPlan:
        case = ctx.case
        return build_plan(case, task_id=ctx.task_id, delete=active_memories(case),
                          replay=final_turn_steps(case),
                          affected=[m.memory_id for m in case.memory_store])
