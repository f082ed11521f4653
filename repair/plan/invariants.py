"""The rollback plan's invariants (docs/method.md §4), checked once, by every method.

    delete ∩ quarantine = ∅
    replay, preserve and redundant pairwise disjoint
    every id resolves in the task: step fields name steps, memory fields name memories
    (ours only) every diagnosed fault is deleted (rule 1) and v_final is replayed (rule 7)

A violation is a bug in the method that made the plan, raised loudly (InternalError).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from provrepair.provenance.errors import InternalError
from provrepair.repair.plan.model import RepairPlan


def plan_problems(plan: RepairPlan, *, steps: Collection[str], memories: Collection[str],
                  faults: Iterable[str] = (), final_id: str | None = None) -> list[str]:
    """What is wrong with `plan` for a task with these step and memory ids."""
    problems = []
    if set(plan.delete_memory_ids) & set(plan.quarantine_memory_ids):
        problems.append("delete and quarantine overlap")
    groups = [set(plan.replay_step_ids), set(plan.preserve_step_ids), set(plan.redundant_step_ids)]
    if any(a & b for i, a in enumerate(groups) for b in groups[i + 1:]):
        problems.append("replay, preserve and redundant are not pairwise disjoint")
    step_fields = (plan.invalidate_claim_ids, plan.replay_step_ids, plan.preserve_step_ids,
                   plan.redundant_step_ids, plan.suspicious_step_ids, plan.seeds.values())
    memory_fields = (plan.delete_memory_ids, plan.quarantine_memory_ids, plan.seeds.keys())
    nodes = set(steps) | set(memories)
    unknown = {i for field in step_fields for i in field if i not in steps}
    unknown |= {i for field in memory_fields for i in field if i not in memories}
    unknown -= {s for s in plan.seeds.values() if s in memories}  # a root fault seeds itself
    unknown |= {i for field in (plan.affected_ids, plan.supported_ids, plan.answer_relevant_ids)
                for i in field if i not in nodes}
    if unknown:
        problems.append(f"ids that name no step/memory of the task: {sorted(unknown)}")
    if not set(faults) <= set(plan.delete_memory_ids):
        problems.append("a diagnosed fault is not deleted")
    if final_id is not None and final_id not in plan.replay_step_ids:
        problems.append("the final answer is not replayed")
    return problems


def check_plan(plan: RepairPlan, *, steps: Collection[str], memories: Collection[str],
               faults: Iterable[str] = (), final_id: str | None = None) -> None:
    """Raise InternalError naming every violated invariant."""
    problems = plan_problems(plan, steps=steps, memories=memories, faults=faults,
                             final_id=final_id)
    if problems:
        raise InternalError(f"plan for task {plan.task_id!r} violates: {'; '.join(problems)}")
