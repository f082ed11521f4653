"""Answer relevance (docs/method.md §4): which invalidated steps reach v_final in G⁻.

G⁻ is the graph over the propagation labels without the removed memories (deleted and
quarantined). We expand forward from V_inv one hop per query, never entering a removed
memory, collect the hops, and walk them backward from v_final in Python: the region visited
is V_inv's descendants in G⁻, not the store.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from provrepair.repair.plan.graph import E_PROP, GraphView, Node


@dataclass
class Relevance:
    answer_relevant: set[str] = field(default_factory=set)     # A_ans (uids)
    toward_answer: dict[str, tuple[str, str]] = field(default_factory=dict)  # uid → (next, label)


def answer_relevant(view: GraphView, invalidated: dict[str, Node], removed: set[str],
                    final: Node | None) -> Relevance:
    result = Relevance()
    if final is None:
        return result
    successors: dict[str, list[tuple[str, str]]] = defaultdict(list)
    seen = set(invalidated)
    frontier = [n for n in invalidated.values() if n.uid not in removed]
    while frontier:
        next_frontier: list[Node] = []
        for anchor, label, node, _ in view.out_hops(frontier, E_PROP):
            if node.uid in removed:
                continue  # G⁻ has no removed memories: no path passes through them
            successors[anchor.uid].append((node.uid, label))
            if node.uid not in seen:
                seen.add(node.uid)
                next_frontier.append(node)
        frontier = next_frontier
    reaches = _reaching(successors, final.uid, result.toward_answer)
    result.answer_relevant = {uid for uid in invalidated if uid in reaches}
    return result


def _reaching(successors: dict[str, list[tuple[str, str]]], target: str,
              toward: dict[str, tuple[str, str]]) -> set[str]:
    """Nodes with a path to target over the collected hops (target reaches itself)."""
    predecessors: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for src, outs in successors.items():
        for dst, label in outs:
            predecessors[dst].append((src, label))
    reached, todo = {target}, [target]
    while todo:
        node = todo.pop()
        for src, label in predecessors[node]:
            if src not in reached:
                reached.add(src)
                toward[src] = (node, label)
                todo.append(src)
    return reached
