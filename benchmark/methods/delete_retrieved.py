"""Baseline "Delete retrieved memories" (docs/method.md, Baselines; paper App. G).

The paper (paraphrased): from the affected subgraph seeded by the diagnosed faults, collect
the active memories retrieved or referenced by its non-retrieval steps before the final
turn, delete them and replay the final user turn; no support check, no derived-memory
cleanup, no answer-relevance. Departure: only in reading "retrieved or referenced" (below).

Selection: the steps of A0 (our affected candidates, seeded by the diagnosed faults: the
"affected subgraph") that are not `memory_read` steps ("non-retrieval") and belong to a turn
before the final one; the memories they read or cite — named in their `used_ids`, or
retrieved by a `memory_read` step they cite — that are active when repair begins. Those are
deleted and the final user turn is replayed. No support check, no derived-memory cleanup,
no answer-relevance, no claim invalidation (F1 = 0 as in the paper; notes §9 A5).

Choices: the spec's "read or cited" is taken as above (a non-retrieval step "reads" a
memory through the retrieval step it cites). The diagnosed faults themselves are deleted
only if such a step uses them (the paper's faulty removal for this baseline is 0.881, not
1). `affected_ids` = A0, so the shared executor restores a record superseded by a deleted
one only when that record is not itself affected (its ordinary rule).
On the paper's travel case this deletes 4 of the 10 benign memories ("preserves only 6 in
10 benign memories", paper App. F).
"""

from __future__ import annotations

from provrepair.benchmark.methods.common import (
    active_memories,
    build_plan,
    final_turn_steps,
    last_turn,
    memories_used_by,
)
from provrepair.provenance.vocab import StepType
from provrepair.repair.methods.base import MethodBase, MethodContext
from provrepair.repair.plan import compute_plan
from provrepair.repair.plan.model import RepairPlan


class DeleteRetrieved(MethodBase):
    name = "delete_retrieved"
    description = "baseline: delete active memories used by affected steps before the final turn"

    def make_plan(self, ctx: MethodContext) -> RepairPlan:
        case = ctx.case
        affected = compute_plan(ctx.store, ctx.task_id, ctx.faults)[0].affected_ids
        region, turn = set(affected), last_turn(case)
        users = [s for s in case.trace if s.step_id in region and s.turn < turn
                 and s.step_type is not StepType.MEMORY_READ]
        delete = memories_used_by(case, users) & active_memories(case)
        return build_plan(case, task_id=ctx.task_id, delete=delete,
                          replay=final_turn_steps(case), affected=affected)
