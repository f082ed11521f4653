"""Reach's statements, their parts and three alternatives, by the server's execution time.

    .venv/bin/python bench/reach_variants.py [--region 1000] [--reps 5]

Starts a throwaway embedded server, stores bench/plan.py's target task (an affected region of
~R nodes), runs the planner's reach once to record each hop's anchors, then times on the
server (falkordb's "internal execution time", min of --reps) for the same hops:

- `per_hop`: what the product runs, cypher/repair/list_out_edges.cypher once per hop
  (also printed: the client-observed time of the same calls, round trip and RESP parsing
  included);
- `edges_only`, `walk`: the same statement without the far nodes' properties, and its walk
  and filter alone returning one count: where the server time of a hop goes;
- `known`: the same statement told which nodes the planner has seen already
  (`$known`, its uids), returning far-node properties only for the others; the client's
  cost of encoding that parameter is printed beside it;
- `levels`: all of reach in one statement, hop after hop inside the query, each level
  `collect(DISTINCT …)` so that it does not enumerate paths. Cypher has no set of visited
  nodes to carry from level to level, so a node reached by paths of several lengths is
  expanded at each of them. It is timed with as many levels as the planner's reach has hops
  and returns only counts (a lower bound: reach needs the edges and more levels);
- `two_connections`: the product's statements, but each hop of ≥ 40 anchors split in two
  halves sent on two connections at once, so that the server's two threads run them side by
  side; client-observed time of all hops, one connection against two, alternating, median
  of --rounds.

Why: issue 14's last target (the plan no slower than the in-memory reference) is held by
reach's hops, which run one after another (BENCHMARKS.md, "Planner").
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from typing import Any

from ab import stored_target  # bench/ (the script's own folder, first on sys.path)
from probes import server_ms

from provrepair.provenance.readback import get_task_props
from provrepair.provenance.store.falkordb import FalkorDBStore
from provrepair.provenance.store.falkordb_wire import check_reply, params_header
from provrepair.repair.plan.affected import reach_affected
from provrepair.repair.plan.graph import E_PROP, PROVENANCE_LABELS, GraphView, Node
from provrepair.repair.plan.seeds import resolve_seeds

ADMITTED = "w.origin_run IS NULL AND type(r) IN $labels AND w.ts >= $tr"
FAR_NODES = ",\n     collect(DISTINCT w) AS far"  # where list_out_edges starts on far nodes
# The product's walk and filter alone, returning one count: what walking the edges costs.
WALK = ("UNWIND $uids AS u MATCH (v:Node {uid: u})-[r]->(w) WITH r, w "
        "WHERE w.origin_run IS NULL AND type(r) IN $labels RETURN count(r)")
KNOWN = "collect(DISTINCT CASE WHEN w.uid IN $known THEN null ELSE w END) AS far"


def recorded_hops(store: FalkorDBStore, task_id: str) -> tuple[list[tuple[list[str], list[str]]], int]:
    """Each hop's anchors with the uids the planner had seen when it sent it; the seed's ts."""
    hops: list[tuple[list[str], list[str]]] = []
    with store.read_ahead() as reads:
        view = GraphView(store, task_id, reads)
        seeds = resolve_seeds(view, get_task_props(store, task_id)["diagnosed_faults"])

        def record(anchors: list[Node]) -> None:
            hops.append(([n.uid for n in anchors], list(view.nodes)))

        reach_affected(view, seeds, record)
    (_, seed), = seeds.values()
    return hops, seed.ts


def level_query(levels: int) -> str:
    """Reach as one statement of `levels` levels (bench only: the product never builds Cypher)."""
    parts = ["UNWIND $uids AS u MATCH (v:Node {uid: u})-[r]->(w) WITH r, w WHERE " + ADMITTED
             + " WITH collect(DISTINCT w) AS l1, count(r) AS e1"]
    for i in range(2, levels + 1):
        counts = ", ".join(f"e{j}" for j in range(1, i))
        parts.append(f"UNWIND l{i - 1} AS x OPTIONAL MATCH (x)-[r]->(w) WITH {counts}, r, w "
                     f"WHERE r IS NULL OR ({ADMITTED}) "
                     f"WITH {counts}, collect(DISTINCT w) AS l{i}, count(r) AS e{i}")
    return " ".join(parts) + " RETURN [" + ", ".join(f"e{i}" for i in range(1, levels + 1)) + "]"


def best_ms(graph: Any, text: str, params: dict[str, Any], reps: int
            ) -> tuple[float, float, Any]:
    """Server ms and client-observed ms (round trip, server, RESP parsing; the parameters
    are encoded before), each the min of reps, and the last reply."""
    header = params_header(params)
    replies, walls = [], []
    for _ in range(reps):
        start = time.perf_counter()
        replies.append(graph.execute_command("GRAPH.RO_QUERY", graph.name, header + text,
                                             "--compact"))
        walls.append((time.perf_counter() - start) * 1000)
    return min(server_ms(r) for r in replies), min(walls), replies[-1]


def measure(store: FalkorDBStore, task_id: str, reps: int, rounds: int) -> dict[str, Any]:
    hops, tr = recorded_hops(store, task_id)
    graph = store._graphs["graph"]  # the raw client graph: statistics of each reply
    per_hop = store.registry["list_out_edges"].text
    known = per_hop.replace("collect(DISTINCT w) AS far", KNOWN)
    assert FAR_NODES in per_hop, "update FAR_NODES for cypher/repair/list_out_edges.cypher"
    edges_only = per_hop.split(FAR_NODES)[0] + "\nRETURN anchors, labels, sufficient, uids"
    labels = PROVENANCE_LABELS  # what the planner sends: every label, CHAIN included
    out: Counter[str] = Counter()
    for uids, seen in hops:
        ms, wall, reply = best_ms(graph, per_hop, {"uids": uids, "labels": labels}, reps)
        out.update(per_hop=ms, per_hop_wall=wall)
        edge_labels = [label for _, label in reply[1][0][1][1]]  # one entry per edge
        far = [uid for _, uid in reply[1][0][4][1]]  # far_uid: one entry per far node
        known_uids = set(seen)
        out.update(edges=len(edge_labels), prop_edges=sum(x in E_PROP for x in edge_labels),
                   far=len(far), far_known=sum(uid in known_uids for uid in far))
        params = {"uids": uids, "labels": labels, "known": seen}
        start = time.perf_counter()
        params_header(params)
        out.update(known_encode=(time.perf_counter() - start) * 1000)
        ms, wall, _ = best_ms(graph, known, params, reps)
        out.update(known=ms, known_wall=wall)
        for name, text in (("edges_only", edges_only), ("walk", WALK)):
            ms, wall, _ = best_ms(graph, text, {"uids": uids, "labels": labels}, reps)
            out.update({name: ms, f"{name}_wall": wall})
    ms, _, reply = best_ms(graph, level_query(len(hops)),
                           {"uids": hops[0][0], "labels": sorted(E_PROP), "tr": tr}, reps)
    return {**out, "hops": len(hops), "levels": ms,
            "level_edges": [value for _, value in reply[1][0][0][1]],
            "connections": connections_ms(store, [u for u, _ in hops], rounds)}


def connections_ms(store: FalkorDBStore, hops: list[list[str]], rounds: int) -> list[float]:
    """Median ms of all hops' statements on one connection, with wide hops split over two,
    and the median of the rounds' two ÷ one ratios."""
    graph = store._graphs["graph"]
    pool = store._db.connection.connection_pool
    first, second = pool.get_connection(), pool.get_connection()
    text, labels = store.registry["list_out_edges"].text, PROVENANCE_LABELS

    def command(uids: list[str]) -> tuple[str, ...]:
        return ("GRAPH.RO_QUERY", graph.name,
                params_header({"uids": uids, "labels": labels}) + text, "--compact")

    def run(split: bool) -> float:
        start = time.perf_counter()
        for uids in hops:
            halves = [uids[:len(uids) // 2], uids[len(uids) // 2:]]
            pairs = (list(zip((first, second), halves, strict=True)) if split and len(uids) >= 40
                     else [(first, uids)])
            for conn, part in pairs:
                conn.send_command(*command(part))
            for conn, _ in pairs:
                check_reply(conn.read_response())
        return (time.perf_counter() - start) * 1000

    try:
        run(False), run(True)  # warm-up: the first round would time cold connections
        times = [(run(False), run(True)) for _ in range(rounds)]
    finally:
        pool.release(first)
        pool.release(second)
    return [statistics.median(t for t, _ in times), statistics.median(t for _, t in times),
            statistics.median(two / one for one, two in times)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--region", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    with stored_target(args.region, "provrepair-reach-") as (store, case):
        assert isinstance(store, FalkorDBStore)
        result = measure(store, case.task_id, args.reps, args.rounds)
    print(f"reach of a ~{args.region}-node region: {result['hops']} hops; server ms "
          f"(client-observed ms: send, server, RESP parse), min of {args.reps}:")
    print(f"  per_hop (the product)          {result['per_hop']:8.2f}  "
          f"({result['per_hop_wall']:.2f})  edges {result['edges']}, "
          f"{result['prop_edges']} of them propagating")
    print(f"  edges only (no far nodes)      {result['edges_only']:8.2f}  "
          f"({result['edges_only_wall']:.2f})")
    print(f"  walk only (one count)          {result['walk']:8.2f}  "
          f"({result['walk_wall']:.2f})")
    print(f"  known                          {result['known']:8.2f}  "
          f"({result['known_wall']:.2f}, + {result['known_encode']:.2f} encoding $known)  "
          f"far nodes returned {result['far']}, already seen {result['far_known']}")
    print(f"  levels (one statement, counts) {result['levels']:8.2f}  "
          f"edges {sum(result['level_edges'])}, "
          f"per level {result['level_edges']}")
    one, two, ratio = result["connections"]
    print(f"client-observed ms of all hops' statements, median of {args.rounds} rounds: one "
          f"connection {one:.2f}, wide hops split over two {two:.2f} (paired ratio {ratio:.2f})")


if __name__ == "__main__":
    main()
