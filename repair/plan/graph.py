"""The planner's window on one task's graph: each node's edges fetched once, nodes cached.

Every stage asks for the edges around a set of nodes, filtered by label in Python. Forward
(`out_hops`): a node's outgoing edges are fetched at most once per plan
(cypher/repair/list_out_edges.cypher: one parameterised query per batch, anchored on the
`:Node(uid)` index); reach fetches those of the affected region, and answer relevance and
the invalidation closure reuse them, querying only nodes outside what was fetched. Every
fetched out-edge is also filed under its target (`in_hops_from_expanded`): the tool steps'
inherited verdicts read only inputs from A0, and the execution closure walks back only to
nodes whose out-edges were fetched before it runs (docs/method.md §3-4; see support.py and
closure.py), so neither needs a query for them. Backward queries are kept to what cannot be
known that way: the support check's usable inputs (list_support_inputs.cypher: sufficient
edges only) and the whole inputs of the invalidated observations (list_in_edges.cypher,
`in_hops`). So the number of statements is about twice the depth of the region the planner
visits (each reach hop also sends its nodes' support inputs), the work grows with that
region, not with the store, and each edge crosses the wire about once. Statements are sent
before their replies are needed when the view has a plan's `ReadAhead` (see GraphView).
No query uses a variable-length pattern: those enumerate paths, exponential on DAGs with
parallel paths. The properties the rules read come with the edges: each edge query also
returns its far nodes' properties, once per node per statement; get_nodes is only for nodes
named by id (seeds, --faults, --explain targets).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from provrepair.provenance.errors import InternalError
from provrepair.provenance.keys import node_uid, task_key
from provrepair.provenance.store.base import GraphStore, Pending, ReadAhead, batched
from provrepair.provenance.vocab import EdgeLabel, StepType

L = EdgeLabel
# E_prop (docs/method.md, preamble): the labels contamination travels along; CHAIN never does.
E_PROP = frozenset({L.INITIATE, L.CITE, L.SUPPORT, L.PRODUCE, L.DELETE, L.UPDATE,
                    L.CONSOLIDATE, L.SUPERSEDE, L.DERIVE})
# The relationship types of recorded provenance (the edge queries' $labels): a repair run's
# marks and REPLAYS edges are other types.
PROVENANCE_LABELS = sorted(label.value for label in EdgeLabel)


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

    def order(self) -> tuple[int, int, str]:
        """Trace order: timestamp, ties by trace position, then by id (a memory and the step
        that wrote it share both: without the id their order followed set iteration, which
        changes with PYTHONHASHSEED)."""
        return (self.ts, self.position, self.id)


# One edge seen from an anchor: (anchor node, edge label, far node, the edge's `sufficient`
# flag (False on labels that carry none)). A plain tuple, unpacked by the stages: a plan
# builds tens of thousands, and a NamedTuple's constructor cost ~30 ms of a 1k-region plan.
Hop = tuple[Node, str, Node, bool]


Edge = tuple[str, bool, Node]  # (label, sufficient, far node): resolved once, when filed

# The node columns of get_nodes.cypher; the edge queries return them as far_<name> lists.
NODE_COLUMNS = ("uid", "id", "task_key", "kind", "step_type", "status", "ts", "turn",
                "position")


class GraphView:
    """Read access to one task's provenance graph.

    Edge statements are sent before their replies are needed (`send_out`, `send_support`,
    `send_task_lists`) when the view has a `ReadAhead` (a plan's): the server runs them while
    the planner works on earlier replies. Replies are filed in the order sent, and a stage
    waits only for the replies of its own kind of statement (`_wait`)."""

    def __init__(self, store: GraphStore, task_id: str, reads: ReadAhead | None = None):
        self.store, self.task_id, self.key = store, task_id, task_key(task_id)
        self.reads = reads  # None: each statement runs when sent (store.run)
        self.nodes: dict[str, Node] = {}
        self.out: dict[str, list[Edge]] = {}   # uid → its outgoing edges (once fetched)
        self.into: dict[str, list[Edge]] = {}  # uid → its incoming edges (once fetched)
        self.supports: dict[str, list[Edge]] = {}  # uid → its usable support inputs
        # uid → the edges entering it from nodes whose outgoing edges were fetched
        self.from_expanded: dict[str, list[Edge]] = defaultdict(list)
        self.round_trips = 0
        # Edge statements sent, not filed yet: (reply, the cache it fills), in send order.
        self._unfiled: deque[tuple[Pending, dict[str, list[Edge]]]] = deque()
        self._sent = self._filed = 0
        self._last: dict[str, int] = {}  # query → the number of its last statement sent
        self._early: dict[str, Pending] = {}  # task-wide statements sent ahead

    def uid(self, node_id: str) -> str:
        return node_uid(self.key, node_id)

    def get(self, node_ids: Iterable[str]) -> dict[str, Node]:
        """The nodes of this task with these ids (absent ids are left out)."""
        uids = [self.uid(i) for i in node_ids]
        self._load(uids)
        return {self.nodes[u].id: self.nodes[u] for u in uids if u in self.nodes}

    def out_hops(self, anchors: Iterable[Node], labels: Iterable[str]) -> list[Hop]:
        """The edges leaving these nodes whose label is one of `labels`."""
        unique = self._unique(anchors)
        self.send_out(n.uid for n in unique)
        self._wait("list_out_edges")
        wanted = frozenset(labels)
        return self._hops(self.out, unique, wanted) if wanted else []

    def send_out(self, uids: Iterable[str]) -> list[Pending]:
        """Send the query for the outgoing edges of these nodes (uids) not asked for yet;
        the replies of the statements sent (reading one does not file it: `file_sent` does,
        and any stage's wait)."""
        return self._send("list_out_edges", self.out, uids, {"labels": PROVENANCE_LABELS})

    @property
    def sent(self) -> int:
        """The number of edge statements sent so far (for `file_sent`)."""
        return self._sent

    def file_sent(self, number: int) -> None:
        """File the replies of the first `number` edge statements sent."""
        self._file_through(number)

    def prefetch_out(self, anchors: Iterable[Node]) -> None:
        """Fetch the outgoing edges of these nodes not fetched yet (no hops built)."""
        self.out_hops(anchors, ())

    def prefetch_in(self, anchors: Iterable[Node]) -> None:
        """Fetch the whole inputs of these nodes not fetched yet (no hops built)."""
        self.in_hops(anchors, ())

    def in_hops(self, anchors: Iterable[Node], labels: Iterable[str]) -> list[Hop]:
        """The edges entering these nodes whose label is one of `labels`."""
        unique = self._unique(anchors)
        self._send("list_in_edges", self.into, (n.uid for n in unique),
                   {"labels": PROVENANCE_LABELS})
        self._wait("list_in_edges")
        wanted = frozenset(labels)
        return self._hops(self.into, unique, wanted) if wanted else []

    def send_support(self, anchors: Iterable[Node], labels: Iterable[str],
                     any_sufficiency: Iterable[str]) -> None:
        """Send the query for the edges entering these nodes with a label in `labels` that
        are sufficient, or whose label is in `any_sufficiency` (list_support_inputs.cypher).
        The cache keeps one answer per node: callers pass the same labels every time."""
        self._send("list_support_inputs", self.supports, (n.uid for n in anchors),
                   {"labels": sorted(labels), "any_sufficiency": sorted(any_sufficiency)})

    def support_inputs(self, anchors: Iterable[Node], labels: Iterable[str],
                       any_sufficiency: Iterable[str]) -> list[Hop]:
        """The edges `send_support` names, of these nodes."""
        unique = self._unique(anchors)
        self.send_support(unique, labels, any_sufficiency)
        self._wait("list_support_inputs")
        return self._hops(self.supports, unique, frozenset(labels))

    def in_hops_from_expanded(self, anchors: Iterable[Node], labels: Iterable[str]) -> list[Hop]:
        """The edges entering these nodes from nodes whose outgoing edges this view has
        fetched (all entering edges where they were fetched). No query."""
        self._file_through(self._sent)  # every edge statement sent so far
        unique = self._unique(anchors)
        known = {n.uid: self.into.get(n.uid) or self.from_expanded.get(n.uid, [])
                 for n in unique}
        return self._hops(known, unique, frozenset(labels))

    @staticmethod
    def _unique(anchors: Iterable[Node]) -> list[Node]:
        return list({n.uid: n for n in anchors}.values())

    def _hops(self, cache: Mapping[str, list[Edge]], anchors: list[Node],
              labels: frozenset[str]) -> list[Hop]:
        return [(anchor, label, far, sufficient) for anchor in anchors
                for label, sufficient, far in cache.get(anchor.uid, ()) if label in labels]

    def _send(self, query: str, cache: dict[str, list[Edge]], anchors: Iterable[str],
              params: dict[str, Any]) -> list[Pending]:
        """One statement per batch of the anchors (uids) not asked for yet; filed later, in
        order."""
        uids = list(dict.fromkeys(u for u in anchors if u not in cache))
        for uid in uids:
            cache[uid] = []
        sent = []
        for batch in batched(uids):
            sent.append(self._send_read(query, {**params, "uids": batch}))
            self._unfiled.append((sent[-1], cache))
            self._sent += 1
            self._last[query] = self._sent
        return sent

    def _wait(self, query: str) -> None:
        """File replies through the last statement sent of this query (a stage reads the
        anchors it sent last, so it waits for nothing it does not need: reach reads its
        hop's out-edges while the support check's statement sent behind them still runs)."""
        self._file_through(self._last.get(query, 0))

    def _file_through(self, number: int) -> None:
        while self._filed < number:
            pending, cache = self._unfiled.popleft()
            self._filed += 1
            for row in pending():
                self._file(row, cache)

    def _file(self, row: dict[str, Any], cache: dict[str, list[Edge]]) -> None:
        """One edge statement's row (one per batch: parallel lists) into `cache`, with the
        properties of its far nodes; out-edges are also filed under their targets."""
        self._far_nodes(row)
        nodes, out = self.nodes, cache is self.out
        for anchor, label, sufficient, far in zip(row["anchors"], row["labels"],
                                                  row["sufficient"], row["uids"], strict=True):
            cache[anchor].append((label, sufficient is True, nodes[far]))
            if out:
                self.from_expanded[far].append((label, sufficient is True, nodes[anchor]))

    def _far_nodes(self, row: dict[str, Any]) -> None:
        """The far nodes of an edge query's row (columns far_*, those of get_nodes)."""
        columns = [row[f"far_{name}"] for name in NODE_COLUMNS]
        for uid, node_id, key, *rest in zip(*columns, strict=True):
            if uid not in self.nodes:
                self._add_node(uid, node_id, key, *rest)

    def _load(self, uids: list[str]) -> None:
        """Fetch the rule-relevant properties of the nodes not seen yet (one query a batch)."""
        missing = [u for u in uids if u not in self.nodes]
        for pending in [self._send_read("get_nodes", {"uids": b}) for b in batched(missing)]:
            for row in pending():
                self.node(row)

    def send_task_lists(self) -> None:
        """Send the two task-wide statements (final answers, the task's steps) now; their
        replies are read when asked for (they do not depend on the region)."""
        for query in ("find_final_answers", "list_task_steps"):
            self._early.setdefault(query, self._send_read(query, {"task_key": self.key}))

    def final_answers(self) -> list[Node]:
        return [self.node(row) for row in self._task_rows("find_final_answers")]

    def step_positions(self) -> dict[str, int]:
        """id → trace position of every step of the task."""
        rows = self._task_rows("list_task_steps")
        return dict(zip(rows[0]["ids"], rows[0]["positions"], strict=True)) if rows else {}

    def _task_rows(self, query: str) -> list[dict[str, Any]]:
        pending = self._early.pop(query, None)
        return pending() if pending else self.rows(query, {"task_key": self.key})

    def rows(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        return self._send_read(query, params)()

    def _send_read(self, query: str, params: dict[str, Any]) -> Pending:
        self.round_trips += 1
        return (self.reads or ReadAhead(self.store)).send(query, params)

    def node(self, row: dict[str, Any]) -> Node:
        """The Node of a result row (every node query returns the same node columns)."""
        node = self.nodes.get(row["uid"])
        if node is None:
            node = self._add_node(row["uid"], row["id"], row["task_key"], row["kind"],
                                  row.get("step_type"), row.get("status"), row["ts"],
                                  row.get("turn"), row["position"])
        return node

    def _add_node(self, uid: str, node_id: str, key: str, kind: str, step_type: str | None,
                  status: str | None, ts: int, turn: int | None, position: int) -> Node:
        if key != self.key:
            raise InternalError(f"an edge leaves task {self.task_id!r} at node {uid!r}")
        node = self.nodes[uid] = Node(uid, node_id, kind, step_type, status, ts, turn, position)
        return node
