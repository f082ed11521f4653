"""The repair planner: docs/method.md §1-4 over the graph in the store."""

from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan.model import RepairPlan
from provrepair.repair.plan.planner import PlanTrace, compute_plan


def plan(store: GraphStore, task_id: str, faults: list[str] | None = None) -> RepairPlan:
    """The rollback plan of a stored task (docs/method.md §1-4); nothing is written."""
    return compute_plan(store, task_id, faults)[0]


__all__ = ["PlanTrace", "RepairPlan", "compute_plan", "plan"]
