"""The support check's statements and their parts, by the server's execution time.

    .venv/bin/python bench/support_variants.py [--region 1000] [--reps 7]

Starts a throwaway embedded server, stores bench/plan.py's target task (an affected region of
~R nodes), runs the planner's reach once to record the nodes each hop sends to the support
check (cypher/repair/list_support_inputs.cypher, one statement per hop), then times on the
server (falkordb's "internal execution time", min of --reps, summed over the statements):

- `product`: the statement as the planner sends it (an untyped step filtered on type(r));
- `typed`: the same with the four types in the pattern (`[r:SUPPORT|CITE|DERIVE|SUPERSEDE]`)
  instead of the filter;
- `walk`, `typed walk`: the in-edge walk alone, returning one count;
- `lookup`: the anchors' index lookups alone.

Why: issue 14's last target (the plan no slower than the in-memory reference). The server
runs one connection's statements one after another, so their execution time summed is a
floor under the plan (bench/plan_phases.py prints it); this says how much of the support
check's share is the walk itself (BENCHMARKS.md, "Planner").
"""

from __future__ import annotations

import argparse
from typing import Any

from ab import stored_target  # bench/ (the script's own folder, first on sys.path)
from reach_variants import best_ms

from provrepair.provenance.readback import get_task_props
from provrepair.provenance.store.base import Pending
from provrepair.provenance.store.falkordb import FalkorDBStore
from provrepair.repair.plan.affected import reach_affected
from provrepair.repair.plan.graph import GraphView
from provrepair.repair.plan.seeds import resolve_seeds
from provrepair.repair.plan.support import send_support_inputs

TYPES = "SUPPORT|CITE|DERIVE|SUPERSEDE"
WALK = "UNWIND $uids AS u MATCH (v:Node {uid: u})<-[r]-(w) RETURN count(r)"  # as the product
VARIANTS = {"walk": WALK, "typed walk": WALK.replace("[r]", f"[r:{TYPES}]"),
            "lookup": "UNWIND $uids AS u MATCH (v:Node {uid: u}) RETURN count(v)"}


def recorded_checks(store: FalkorDBStore, task_id: str) -> list[dict[str, Any]]:
    """The parameters of each support statement one plan's reach sends, as it sends them."""
    checks: list[dict[str, Any]] = []
    with store.read_ahead() as reads:
        view = GraphView(store, task_id, reads)
        seeds = resolve_seeds(view, get_task_props(store, task_id)["diagnosed_faults"])
        faults = {m.uid for m, _ in seeds.values()}
        send_read = view._send_read

        def record(query: str, params: dict[str, Any]) -> Pending:
            if query == "list_support_inputs":
                checks.append(params)
            return send_read(query, params)

        view._send_read = record  # type: ignore[method-assign]
        reach_affected(view, seeds, lambda nodes: send_support_inputs(view, nodes, faults))
    return checks


def measure(store: FalkorDBStore, task_id: str, reps: int) -> dict[str, float]:
    checks = recorded_checks(store, task_id)
    graph = store._graphs["graph"]  # the raw client graph: statistics of each reply
    product = store.registry["list_support_inputs"].text
    assert "MATCH (v:Node {uid: u})<-[r]-(w)" in product, "update the typed variant"
    typed = product.replace("<-[r]-(w)", f"<-[r:{TYPES}]-(w)").replace(
        " AND type(r) IN $labels", "")
    assert typed.count(TYPES) == 1 and "type(r) IN $labels" not in typed, "update the typed variant"
    out = {"statements": float(len(checks)), "uids": float(sum(len(p["uids"]) for p in checks))}
    for name, text in {"product": product, "typed": typed, **VARIANTS}.items():
        out[name] = sum(best_ms(graph, text, {k: v for k, v in params.items() if f"${k}" in text},
                                reps)[0] for params in checks)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--region", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    with stored_target(args.region, "provrepair-support-") as (store, case):
        assert isinstance(store, FalkorDBStore)
        m = measure(store, case.task_id, args.reps)
    print(f"support check of a ~{args.region}-node region: {m['statements']:.0f} statements, "
          f"{m['uids']:.0f} nodes; server ms, min of {args.reps}, summed:")
    for name in ("product", "typed", "walk", "typed walk", "lookup"):
        print(f"  {name:12s} {m[name]:7.2f}")


if __name__ == "__main__":
    main()
