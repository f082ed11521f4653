"""The planner's window on one task's graph: each node's edges fetched once, nodes cached.

Every stage asks for the edges around a set of nodes, in one direction (`out_hops`,
`in_hops`), filtered by label in Python. The edges of a node are fetched at most once per
direction per plan (cypher/repair/list_out_edges.cypher, list_in_edges.cypher: one
parameterised query per batch, anchored on the `:Node(uid)` index): reach fetches the
forward edges of the affected region, the support check the backward ones, and answer
relevance, invalidation and the execution closure reuse them, querying only nodes outside
what was fetched. So the number of round trips is the depth of the region the planner
visits, the work grows with that region, not with the store, and each edge crosses the
wire at most twice (once from each end). No query uses a variable-length pattern: those
enumerate paths, exponential on DAGs with parallel paths. The properties the rules read are
fetched once per node (get_nodes).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from provrepair.provenance.errors import InternalError
from provrepair.provenance.keys import node_uid, task_key
from provrepair.provenance.store.base import GraphStore, batched
from provrepair.provenance.vocab import EdgeLabel, StepType

L = EdgeLabel
# E_prop (docs/method.md, preamble): the labels contamination travels along; CHAIN never does.
E_PROP = frozenset({L.INITIATE, L.CITE, L.SUPPORT, L.PRODUCE, L.DELETE, L.UPDATE,
                    L.CONSOLIDATE, L.SUPERSEDE, L.DERIVE})


@dataclass(frozen=True)
class Node:
    uid: str
    id: str
    kind: str                 # user_input | memory | step
    step_type: str | None
    status: str | None        # memory status, or step status (ok | error)
    ts: int
    turn: int | None
    position: int

    @property
    def is_step(self) -> bool:
        return self.kind == "step"

    @property
    def is_memory(self) -> bool:
        return self.kind == "memory"

    def is_a(self, step_type: StepType) -> bool:
        return self.step_type == step_type  # a StrEnum member equals its value

    def order(self) -> tuple[int, int]:
        """Trace order: timestamp, ties by trace position."""
        return (self.ts, self.position)


class Hop(NamedTuple):
    """One edge seen from an anchor: the anchor node, the edge label, the far node, and the
    edge's `sufficient` flag (False on labels that carry none)."""

    anchor: Node
    label: str
    node: Node
    sufficient: bool


Edge = tuple[str, bool, str]  # (label, sufficient, far uid)


class GraphView:
    """Read access to one task's provenance graph."""

    def __init__(self, store: GraphStore, task_id: str):
        self.store, self.task_id, self.key = store, task_id, task_key(task_id)
        self.nodes: dict[str, Node] = {}
        self.out: dict[str, list[Edge]] = {}   # uid → its outgoing edges (once fetched)
        self.into: dict[str, list[Edge]] = {}  # uid → its incoming edges (once fetched)
        self.round_trips = 0

    def uid(self, node_id: str) -> str:
        return node_uid(self.key, node_id)

    def get(self, node_ids: Iterable[str]) -> dict[str, Node]:
        """The nodes of this task with these ids (absent ids are left out)."""
        uids = [self.uid(i) for i in node_ids]
        self._load(uids)
        return {self.nodes[u].id: self.nodes[u] for u in uids if u in self.nodes}

    def out_hops(self, anchors: Iterable[Node], labels: Iterable[str]) -> list[Hop]:
        """The edges leaving these nodes whose label is one of `labels`."""
        return self._hops("list_out_edges", self.out, anchors, frozenset(labels))

    def in_hops(self, anchors: Iterable[Node], labels: Iterable[str]) -> list[Hop]:
        """The edges entering these nodes whose label is one of `labels`."""
        return self._hops("list_in_edges", self.into, anchors, frozenset(labels))

    def _hops(self, query: str, cache: dict[str, list[Edge]], anchors: Iterable[Node],
              labels: frozenset[str]) -> list[Hop]:
        unique = list({n.uid: n for n in anchors}.values())
        self._fetch(query, cache, [n.uid for n in unique if n.uid not in cache])
        nodes = self.nodes
        return [Hop(anchor, label, nodes[far], sufficient) for anchor in unique
                for label, sufficient, far in cache[anchor.uid] if label in labels]

    def _fetch(self, query: str, cache: dict[str, list[Edge]], uids: list[str]) -> None:
        """Every edge of these nodes in one direction (recorded nodes only), then the
        properties of the far nodes not seen yet."""
        for uid in uids:
            cache[uid] = []
        far: dict[str, None] = {}
        for rows in self._batches(query, "uids", uids):
            for row in rows:
                cache[row["anchor"]].append((row["label"], row["sufficient"] is True, row["uid"]))
                far[row["uid"]] = None
        self._load(list(far))

    def _load(self, uids: list[str]) -> None:
        """Fetch the rule-relevant properties of the nodes not seen yet (one query a batch)."""
        for rows in self._batches("get_nodes", "uids", [u for u in uids if u not in self.nodes]):
            for row in rows:
                self.node(row)

    def final_answers(self) -> list[Node]:
        return [self.node(row) for row in self.rows("find_final_answers", {"task_key": self.key})]

    def step_positions(self) -> dict[str, int]:
        """id → trace position of every step of the task."""
        return {row["id"]: row["position"]
                for row in self.rows("list_task_steps", {"task_key": self.key})}

    def rows(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        self.round_trips += 1
        return self.store.run(query, params)

    def node(self, row: dict[str, Any]) -> Node:
        """The Node of a result row (every node query returns the same node columns)."""
        if row["task_key"] != self.key:
            raise InternalError(f"an edge leaves task {self.task_id!r} at node {row['uid']!r}")
        node = self.nodes.get(row["uid"])
        if node is None:
            node = Node(row["uid"], row["id"], row["kind"], row.get("step_type"),
                        row.get("status"), row["ts"], row.get("turn"), row["position"])
            self.nodes[node.uid] = node
        return node

    def _batches(self, query: str, key: str, items: list[Any]) -> Iterator[list[dict[str, Any]]]:
        for batch in batched(items):
            self.round_trips += 1
            yield self.store.run(query, {key: batch})
