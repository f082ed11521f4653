"""Where a plan's time goes: reach against the stages after it, wall and client CPU.

    .venv/bin/python bench/plan_phases.py [--region 1000] [--plans 41]

Starts a throwaway embedded server, stores bench/plan.py's target task (an affected region of
~R nodes) and times `compute_plan` with its reach stage (`reach_affected`) timed apart: wall
time and this thread's CPU time of each, medians of --plans plans after a warm-up, with the
in-memory reference planner (benchmark/reference.py) on the same case interleaved plan by plan,
and the server's own execution time of the plan's statements (the sum of what FalkorDB reports
per statement: one connection's statements run one after another, so no plan over one
connection is shorter; nor is it shorter than the execution time of the statements read by the
end of the support check plus the client's CPU time after it, the "floor"). Reach's wall time
minus its CPU time is what the planner waits for the server (reach's hops depend on each
other); the stages after reach need the whole region (a candidate's independence is
p ∉ F ∪ A0), so they start when reach ends. The cyclic GC is paused by the product
meanwhile, as in every plan.

Why: issue 14's last target (the plan no slower than the in-memory reference; BENCHMARKS.md,
"Planner").
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from ab import stored_target  # bench/ (the script's own folder, first on sys.path)
from probes import server_ms

from provrepair.benchmark.reference import plan_in_memory
from provrepair.provenance.models import Case
from provrepair.provenance.store import falkordb
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.falkordb_wire import rows
from provrepair.repair.plan import planner


def timed(function: Callable[..., Any], into: dict[str, float]) -> Callable[..., Any]:
    """`function`, recording the wall and thread CPU ms of its last call in `into`."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            into["wall"] = (time.perf_counter() - wall) * 1000
            into["cpu"] = (time.thread_time() - cpu) * 1000
            into["end_cpu"] = time.thread_time() * 1000
    return wrapper


def count_server_ms(into: dict[str, float]) -> None:
    """Add the server's execution time of every reply the store decodes to into["server"]."""
    def counted(graph: Any, reply: Any) -> Any:
        into["server"] += server_ms(reply)
        return rows(graph, reply)
    vars(falkordb)["rows"] = counted  # the name both of the store's read paths decode with


def measure(store: GraphStore, case: Case, plans: int) -> dict[str, float]:
    server = {"server": 0.0}
    count_server_ms(server)
    reach: dict[str, float] = {}
    planner.reach_affected = timed(planner.reach_affected, reach)  # type: ignore[attr-defined]
    support: dict[str, float] = {}
    check = timed(vars(planner)["check_support"], support)

    def check_support(*args: Any) -> Any:  # and the server time of the replies read so far
        try:
            return check(*args)
        finally:
            support["server"] = server["server"]
    vars(planner)["check_support"] = check_support
    plan: dict[str, float] = {}
    compute = timed(planner.compute_plan, plan)
    compute(store, case.task_id)  # warm-up
    runs: dict[str, list[float]] = {key: [] for key in
                                    ("plan", "plan_cpu", "reach", "reach_cpu", "waiting", "after",
                                     "after_cpu", "reference", "server", "floor",
                                     "after_support_cpu")}
    for _ in range(plans):
        server["server"] = 0.0
        compute(store, case.task_id)
        runs["server"].append(server["server"])
        start = time.perf_counter()
        plan_in_memory(case)
        runs["reference"].append((time.perf_counter() - start) * 1000)
        runs["plan"].append(plan["wall"])
        runs["plan_cpu"].append(plan["cpu"])
        runs["reach"].append(reach["wall"])
        runs["reach_cpu"].append(reach["cpu"])
        runs["waiting"].append(reach["wall"] - reach["cpu"])
        runs["after"].append(plan["wall"] - reach["wall"])
        runs["after_cpu"].append(plan["cpu"] - reach["cpu"])
        runs["after_support_cpu"].append(plan["end_cpu"] - support["end_cpu"])
        runs["floor"].append(support["server"] + runs["after_support_cpu"][-1])
    return {key: statistics.median(values) for key, values in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--region", type=int, default=1000)
    parser.add_argument("--plans", type=int, default=41)
    args = parser.parse_args()
    with stored_target(args.region, "provrepair-phases-") as (store, case):
        m = measure(store, case, args.plans)
    print(f"~{args.region}-node region, medians of {args.plans} plans (ms):")
    print(f"  plan          wall {m['plan']:6.1f}  client CPU {m['plan_cpu']:6.1f}")
    print(f"  reach         wall {m['reach']:6.1f}  client CPU {m['reach_cpu']:6.1f}  "
          f"waiting {m['waiting']:.1f}")
    print(f"  after reach   wall {m['after']:6.1f}  client CPU {m['after_cpu']:6.1f}")
    print(f"  server execution of the plan's statements {m['server']:.1f}")
    print(f"  client CPU after the support check {m['after_support_cpu']:.1f}; floor: server "
          f"execution of the statements read by then + that CPU {m['floor']:.1f}")
    print(f"  in-memory reference {m['reference']:.1f} (plan ×{m['plan'] / m['reference']:.2f}, "
          f"server execution ×{m['server'] / m['reference']:.2f}, "
          f"client CPU ×{m['plan_cpu'] / m['reference']:.2f}, "
          f"floor ×{m['floor'] / m['reference']:.2f})")


if __name__ == "__main__":
    main()
