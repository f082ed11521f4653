"""Invalidation closure and the execution closure ExecClosure (docs/method.md §4)."""

from __future__ import annotations

from dataclasses import dataclass, field

from provrepair.provenance.vocab import EdgeLabel, StepType
from provrepair.repair.plan.graph import E_PROP, GraphView, Node

CONTROL_LABELS = frozenset({EdgeLabel.CITE, EdgeLabel.CHAIN})
CLOSURE_LABELS = E_PROP | {EdgeLabel.CHAIN}


def _controls(v: Node, label: str, w: Node) -> bool:
    """Invalidation passes a plan → the actions citing it, an action → its observations
    (the action is in their prev_step_ids or used_ids)."""
    return ((v.is_a(StepType.PLAN) and label == EdgeLabel.CITE
             and w.is_a(StepType.TOOL_ACTION))
            or (v.is_a(StepType.TOOL_ACTION) and w.is_a(StepType.TOOL_OBSERVATION)))


def _walked(v: Node, label: str, p: Node) -> bool:
    """The closure walks back (edge p -label-> v) over the propagation labels, and over
    CHAIN only from an observation to its generating action (linked only by prev_step_ids)."""
    return label != EdgeLabel.CHAIN or (v.is_a(StepType.TOOL_OBSERVATION)
                                        and p.is_a(StepType.TOOL_ACTION))


def close_invalidation(view: GraphView, invalid_steps: list[Node]) -> dict[str, Node]:
    """V_inv: A ∩ V_step closed under plan → its actions → their observations."""
    closed = {n.uid: n for n in invalid_steps}
    frontier = [n for n in invalid_steps if n.is_a(StepType.PLAN) or n.is_a(StepType.TOOL_ACTION)]
    while frontier:
        added = []
        for v, label, w, _ in view.out_hops(frontier, CONTROL_LABELS):
            if _controls(v, label, w) and w.uid not in closed:
                closed[w.uid] = w
                added.append(w)
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

    Which edges it reads: an observation's whole inputs (`in_hops`: its generating action may
    lie anywhere), and for every other node only the edges from nodes whose outgoing edges
    were fetched (`in_hops_from_expanded`, no query). That is enough: a predecessor the walk
    keeps (`_needed`) is in V_inv or a removed memory, and reach (A0 ⊇ removed) and answer
    relevance (from V_inv) fetched the outgoing edges of all of those before this runs; the
    first line makes sure of it whatever ran before (no query when they are all cached).
    The observations the walk meets are those of V_inv (start nodes are A_ans ⊆ V_inv,
    v_final and the seeds; `_needed` keeps only V_inv steps): the second line fetches their
    whole inputs in one statement, not one per level of the walk (any other observation
    would be fetched when met).
    """
    view.prefetch_out([*invalidated.values(), *(view.nodes[u] for u in removed)])
    view.prefetch_in(n for n in invalidated.values() if n.is_a(StepType.TOOL_OBSERVATION))
    closure = Closure()
    visited: set[str] = set()
    frontier = [n for n in start if _visit(n, visited)]
    for node in frontier:
        if not node.is_a(StepType.TOOL_OBSERVATION):
            closure.replay[node.uid] = node
    while frontier:
        added: list[Node] = []
        observations = [n for n in frontier if n.is_a(StepType.TOOL_OBSERVATION)]
        others = [n for n in frontier if not n.is_a(StepType.TOOL_OBSERVATION)]
        for v, label, p, _ in (view.in_hops(observations, CLOSURE_LABELS)
                               + view.in_hops_from_expanded(others, CLOSURE_LABELS)):
            # Visited first: most inputs of a closure node were reached already, and the
            # two predicates have no side effects.
            if (p.uid in visited or not _walked(v, label, p)
                    or not _needed(p, v, label, invalidated, removed)):
                continue
            visited.add(p.uid)
            added.append(p)
            closure.needed_by[p.uid] = (v.uid, label)
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
