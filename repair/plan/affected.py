"""Affected candidates A0 (docs/method.md §2): frontier expansion, one query per hop.

A0 = ∪_m ({m, r(m)} ∪ Reach_m(r(m)) ∪ Reach_m(m)); Reach_m enters v only if ts(v) ≥ t_r(m),
over E_prop (CHAIN never propagates). Nodes written by repair runs are never entered (the
edge queries do not return them).
Several faults are traced together: each node keeps the smallest threshold it was reached
with (a smaller t_r admits a superset), and is expanded again only if a smaller one arrives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from provrepair.repair.plan.graph import E_PROP, GraphView, Node


@dataclass
class Affected:
    nodes: dict[str, Node] = field(default_factory=dict)          # uid → node (A0)
    threshold: dict[str, int] = field(default_factory=dict)       # uid → smallest t_r
    # uid → (predecessor uid, label, fault id): how the node was first reached (--explain)
    reached_from: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)          # uid → fault id

    def __contains__(self, uid: str) -> bool:
        return uid in self.nodes


def reach_affected(view: GraphView, seeds: dict[str, tuple[Node, Node]],
                   on_frontier: Callable[[list[Node]], None] | None = None) -> Affected:
    """A0, one statement per hop. `on_frontier(nodes)` is called with each hop's anchors
    once their statement is sent, before its reply is read: statements it sends run on
    the server while this loop works on the reply (the planner sends the support check's)."""
    region = Affected()
    frontier: dict[str, int] = {}
    for fault_id, (memory, seed) in seeds.items():
        t_r = seed.ts
        for start in (memory, seed):  # in A0 unconditionally; expanded with this t_r
            if _admit(region, start, t_r, fault_id):
                frontier[start.uid] = region.threshold[start.uid]
    while frontier:
        current, frontier = frontier, {}
        anchors = [region.nodes[uid] for uid in current]
        view.send_out(anchors)
        if on_frontier is not None:
            on_frontier(anchors)
        for anchor, label, node, _ in view.out_hops(anchors, E_PROP):
            tr = current[anchor.uid]
            if node.ts >= tr and _admit(region, node, tr, region.origin[anchor.uid]):
                region.reached_from.setdefault(node.uid, (anchor.uid, label,
                                                          region.origin[anchor.uid]))
                frontier[node.uid] = tr
    return region


def _admit(region: Affected, node: Node, tr: int, fault_id: str) -> bool:
    """Record node as reached with threshold tr; True if it must be (re)expanded."""
    old = region.threshold.get(node.uid)
    if old is not None and old <= tr:
        return False
    region.nodes[node.uid] = node
    region.threshold[node.uid] = tr
    region.origin.setdefault(node.uid, fault_id)
    return True
