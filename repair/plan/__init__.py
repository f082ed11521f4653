"""The repair planner: repair-semantics.md §1-4 over the graph in the store."""

from repair.plan.model import RepairPlan
from repair.plan.planner import PlanTrace, compute_plan

__all__ = ["PlanTrace", "RepairPlan", "compute_plan"]
