"""Invalidation closure and the execution closure ExecClosure (docs/method.md §4)."""

from __future__ import annotations

from dataclasses import dataclass, field

from provrepair.provenance.vocab import StepType
from provrepair.repair.plan.graph import GraphView, Node


def close_invalidation(view: GraphView, invalid_steps: list[Node]) -> dict[str, Node]:
    """V_inv: A ∩ V_step closed under plan → its actions → their observations."""
    closed = {n.uid: n for n in invalid_steps}
    frontier = [n for n in invalid_steps if n.is_a(StepType.PLAN) or n.is_a(StepType.TOOL_ACTION)]
    while frontier:
        added = []
        for hop in view.hops("list_controlled_steps", frontier, "from_uid"):
            if hop.node.uid not in closed:
                closed[hop.node.uid] = hop.node
                added.append(hop.node)
        frontier = added
    return closed


@dataclass
class Closure:
    replay: dict[str, Node] = field(default_factory=dict)          # V_replay (uids)
    needed_by: dict[str, tuple[str, str]] = field(default_factory=dict)  # uid → (dependent, why)


def exec_closure(view: GraphView, start: list[Node], invalidated: dict[str, Node],
                 removed: set[str]) -> Closure:
    """Every invalidated executable prerequisite of the start nodes, recursively.

    Observations are never replayed: an observation in the set is replaced by its generating
    actions (they refresh it). The walk passes through removed memories that a closure node
    reads (SUPPORT) to their producers in V_inv, so a removed record the answer path used is
    regenerated. Memories themselves are never replayed.
    """
    closure = Closure()
    visited: set[str] = set()
    frontier = [n for n in start if _visit(n, visited)]
    for node in frontier:
        if not node.is_a(StepType.TOOL_OBSERVATION):
            closure.replay[node.uid] = node
    while frontier:
        added: list[Node] = []
        for hop in view.hops("list_closure_predecessors", frontier, "to_uid"):
            p, v = hop.node, hop.anchor
            if not _needed(p, v, hop.label, invalidated, removed):
                continue
            if p.uid not in visited:
                visited.add(p.uid)
                added.append(p)
                closure.needed_by[p.uid] = (v.uid, hop.label)
                if p.is_step and not p.is_a(StepType.TOOL_OBSERVATION):
                    closure.replay[p.uid] = p
        frontier = added
    return closure


def _needed(p: Node, v: Node, label: str, invalidated: dict[str, Node], removed: set[str]) -> bool:
    """Is predecessor p (edge p -label-> v) something the closure must walk to?"""
    if v.is_a(StepType.TOOL_OBSERVATION):
        return p.is_a(StepType.TOOL_ACTION)  # refreshed by replaying its generating action
    if v.is_memory:  # a removed memory passed through: its producer, if invalidated
        return label == "PRODUCE" and p.uid in invalidated
    if p.is_memory:
        return label == "SUPPORT" and p.uid in removed
    return p.is_step and p.uid in invalidated


def _visit(node: Node, visited: set[str]) -> bool:
    if node.uid in visited:
        return False
    visited.add(node.uid)
    return True
