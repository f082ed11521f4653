"""Affected candidates A0 (docs/method.md §2): frontier expansion, one query per hop.

A0 = ∪_m ({m, r(m)} ∪ Reach_m(r(m)) ∪ Reach_m(m)); Reach_m enters v only if ts(v) ≥ t_r(m),
over E_prop (CHAIN never propagates). Nodes written by repair runs are never entered (the
edge queries do not return them).
Several faults are traced together: each node keeps the smallest threshold it was reached
with (a smaller t_r admits a superset), and is expanded again only if a smaller one arrives.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from provrepair.provenance.store.base import Pending
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
    the server while this loop works on the reply (the planner sends the support check's).
    The next hop is decided from the reply's columns and sent before the reply is filed
    (Node objects, edge caches): the server runs it while the planner files."""
    region = Affected()
    frontier: dict[str, int] = {}
    for fault_id, (memory, seed) in seeds.items():
        t_r = seed.ts
        for start in (memory, seed):  # in A0 unconditionally; expanded with this t_r
            region.nodes[start.uid] = start
            if _admit(region, start.uid, t_r, fault_id):
                frontier[start.uid] = region.threshold[start.uid]
    fetched = {uid for uid in frontier if uid in view.out}
    replies = view.send_out(frontier)
    while frontier:
        current, sent = frontier, view.sent
        if on_frontier is not None:
            on_frontier([region.nodes[uid] for uid in current])
        frontier = {}
        for anchor, label, far, ts in _out_edges(view, current, fetched, replies):
            tr = current[anchor]
            if ts >= tr and label in E_PROP and _admit(region, far, tr, region.origin[anchor]):
                region.reached_from.setdefault(far, (anchor, label, region.origin[anchor]))
                frontier[far] = tr
        fetched = {uid for uid in frontier if uid in view.out}
        replies = view.send_out(frontier)
        view.file_sent(sent)  # this hop's reply, filed while the server runs the next
        for uid in frontier:
            region.nodes[uid] = view.nodes[uid]
    return region


def _out_edges(view: GraphView, anchors: dict[str, int], fetched: set[str],
               replies: list[Pending]) -> Iterator[tuple[str, str, str, int]]:
    """(anchor, label, far uid, far ts) of every edge leaving these anchors, in the order
    of the anchors: read from the hop's replies (not filed yet), or from the edge cache for
    anchors fetched on an earlier hop (a node reached again with a smaller threshold)."""
    edges: list[tuple[str, str, str, int]] = []
    for pending in replies:
        for row in pending():
            ts = dict(zip(row["far_uid"], row["far_ts"], strict=True))
            edges += [(anchor, label, far, ts[far]) for anchor, label, far
                      in zip(row["anchors"], row["labels"], row["uids"], strict=True)]
    # The server lists a statement's edges grouped by anchor, anchors in the order sent;
    # the order decides only which predecessor --explain names first, never the plan.
    if not fetched:
        return iter(edges)
    by_anchor: dict[str, list[tuple[str, str, str, int]]] = defaultdict(list)
    for edge in edges:
        by_anchor[edge[0]].append(edge)
    for anchor in fetched:
        by_anchor[anchor] = [(anchor, label, n.uid, n.ts) for label, _, n in view.out[anchor]]
    return (edge for anchor in anchors for edge in by_anchor.get(anchor, ()))


def _admit(region: Affected, uid: str, tr: int, fault_id: str) -> bool:
    """Record uid as reached with threshold tr; True if it must be (re)expanded."""
    old = region.threshold.get(uid)
    if old is not None and old <= tr:
        return False
    region.threshold[uid] = tr
    region.origin.setdefault(uid, fault_id)
    return True
