"""The repair planner: docs/method.md §1-4 over the graph in the store."""

from provrepair.repair.plan.model import RepairPlan
from provrepair.repair.plan.planner import PlanTrace, compute_plan

__all__ = ["PlanTrace", "RepairPlan", "compute_plan"]
