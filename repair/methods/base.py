"""The method interface: plan a repair of one stored task. Replay is shared (Executor)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from provenance.models import Case
from provenance.store.base import GraphStore
from repair.plan.model import RepairPlan
from repair.reasoners.base import Reasoner


@dataclass
class MethodContext:
    store: GraphStore
    task_id: str
    case: Case                      # the stored case WITHOUT its evaluation block
    faults: list[str] | None        # override of the diagnosed faults
    reasoner: Reasoner              # for methods that ask an LLM to plan (LLM-judge)


class Method(Protocol):
    name: str
    description: str

    def plan(self, ctx: MethodContext) -> RepairPlan:
        """The rollback plan this method applies (same fields as ours)."""
        ...
