"""The planner's window on one task's graph: stage queries run hop by hop, nodes cached.

Every fetch is one parameterised query over a batch (`UNWIND $uids` / `UNWIND $frontier`),
anchored on the `:Node(uid)` index, so the number of round trips is the depth of the region
the planner visits and the work grows with that region, not with the store. No query uses a
variable-length pattern: those enumerate paths, exponential on DAGs with parallel paths.
A hop returns only (anchor, label, far uid); the properties the rules read are fetched once
per node (get_nodes), which cut the rows' values by ~60% on 1k-node regions (BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from provrepair.provenance.errors import InternalError
from provrepair.provenance.keys import node_uid, task_key
from provrepair.provenance.store.base import GraphStore, batched
from provrepair.provenance.vocab import StepType


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
        return self.step_type == step_type.value

    def order(self) -> tuple[int, int]:
        """Trace order: timestamp, ties by trace position."""
        return (self.ts, self.position)


@dataclass(frozen=True)
class Hop:
    """One row of a stage query: the anchor (frontier) node, the edge label, the far node."""

    anchor: Node
    label: str
    node: Node
    row: dict[str, Any]


class GraphView:
    """Read access to one task's provenance graph."""

    def __init__(self, store: GraphStore, task_id: str):
        self.store, self.task_id, self.key = store, task_id, task_key(task_id)
        self.nodes: dict[str, Node] = {}
        self.round_trips = 0

    def uid(self, node_id: str) -> str:
        return node_uid(self.key, node_id)

    def get(self, node_ids: Iterable[str]) -> dict[str, Node]:
        """The nodes of this task with these ids (absent ids are left out)."""
        uids = [self.uid(i) for i in node_ids]
        self._load(uids)
        return {self.nodes[u].id: self.nodes[u] for u in uids if u in self.nodes}

    def hops(self, query: str, anchors: Iterable[Node], anchor_field: str) -> list[Hop]:
        """Run a one-hop stage query from these anchor nodes."""
        uids = list(dict.fromkeys(n.uid for n in anchors))
        rows = [row for batch in self._batches(query, "uids", uids) for row in batch]
        return self._hops(rows, anchor_field)

    def frontier_hops(self, query: str, frontier: list[dict[str, Any]]) -> list[Hop]:
        """Run a one-hop query whose frontier rows carry more than a uid (e.g. a threshold)."""
        rows = [row for batch in self._batches(query, "frontier", frontier) for row in batch]
        return self._hops(rows, "from_uid")

    def _hops(self, rows: list[dict[str, Any]], anchor_field: str) -> list[Hop]:
        self._load(list(dict.fromkeys(row["uid"] for row in rows)))
        return [Hop(self.nodes[row[anchor_field]], row["label"], self.nodes[row["uid"]], row)
                for row in rows]

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
        """The Node of a result row (every stage query returns the same node columns)."""
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
