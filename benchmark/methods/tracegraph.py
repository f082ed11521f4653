"""An in-memory view of one case's typed edges (provenance.edges), for the trace-centric
baselines: breadth-first distances and reachability over a chosen set of labels."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable

from provrepair.provenance.edges import derive_edges
from provrepair.provenance.models import Case
from provrepair.provenance.vocab import EdgeLabel

E_PROP = frozenset(label for label in EdgeLabel if label is not EdgeLabel.CHAIN)
E_ALL = frozenset(EdgeLabel)


class TraceGraph:
    def __init__(self, case: Case):
        self.forward: dict[str, list[tuple[EdgeLabel, str]]] = defaultdict(list)
        self.backward: dict[str, list[tuple[EdgeLabel, str]]] = defaultdict(list)
        for edge in derive_edges(case):
            self.forward[edge.src].append((edge.label, edge.dst))
            self.backward[edge.dst].append((edge.label, edge.src))
        self.steps = {s.step_id for s in case.trace}

    def distances(self, start: str, labels: Iterable[EdgeLabel], *,
                  backward: bool = False) -> dict[str, int]:
        """Shortest hop count from `start` to every node it reaches (itself at 0)."""
        allowed = frozenset(labels)
        adjacency = self.backward if backward else self.forward
        seen = {start: 0}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            for label, other in adjacency[node]:
                if label in allowed and other not in seen:
                    seen[other] = seen[node] + 1
                    queue.append(other)
        return seen

    def reached_steps(self, start: str) -> set[str]:
        """Steps forward-reachable from `start` over E_prop (not `start` itself)."""
        return {n for n in self.distances(start, E_PROP) if n in self.steps} - {start}
