"""The repair planner: docs/method.md §1-4 over the graph in the store."""

from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan.model import RepairPlan, Scope
from provrepair.repair.plan.planner import PlanTrace, compute_plan
from provrepair.repair.plan.scope import with_scope


def plan(store: GraphStore, task_id: str, faults: list[str] | None = None, *,
         scope: Scope = "task") -> RepairPlan:
    """The rollback plan of a stored task (docs/method.md §1-4); nothing is written.
    `scope="namespace"`: its echo sweep also lists the suspected copies in the other tasks of
    the task's memory namespace (`namespace_copies`; repair/plan/scope.py)."""
    return with_scope(store, compute_plan(store, task_id, faults)[0], scope)


__all__ = ["PlanTrace", "RepairPlan", "compute_plan", "plan"]
