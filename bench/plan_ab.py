"""Planner A/B: this working tree against an earlier commit, on the same stored task.

    .venv/bin/python bench/plan_ab.py --base REV [--region 1000] [--rounds 7]

Starts a throwaway embedded server (a temp PROVREPAIR_HOME), stores bench/plan.py's target
task with an affected region of ~R nodes, then alternates fresh processes of the base commit
(a `git worktree` of REV, put first on PYTHONPATH as a folder named `provrepair`, the way
bench/property.py plants mutants) and of the installed working tree. Each process measures
`compute_plan` (p50 and mean of 15 runs after a warm-up), the in-memory reference planner on
the same case, and the statements and rows of one plan. Printed: per-round new/old ratios
(rounds are paired in time, so machine noise hits both alike), their median, and each side's
medians.
Both sides must produce the same plan.
"""

from __future__ import annotations

import argparse
import statistics

from ab import (  # bench/ (the script's own folder, first on sys.path)
    paired_rounds,
    print_ratios,
    shared_server,
    sides,
)
from plan import target_case

from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.config import open_store

MEASURE = r'''
import json, sys, time
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.config import open_store
from provrepair.repair.plan import compute_plan
from provrepair.benchmark.reference import plan_in_memory
store, task = open_store(), sys.argv[1]
compute_plan(store, task)
counts = [0, 0]
run = store.run
def counted(name, params=None):
    rows = run(name, params)
    counts[0] += 1
    counts[1] += len(rows)
    return rows
try:  # pipelined reads (since the fourth stop of issue 14) bypass store.run
    from provrepair.provenance.store.falkordb import PipelinedReads
except ImportError:
    PipelinedReads = None
if PipelinedReads is not None:
    read_next = PipelinedReads._read_next
    def counted_read(self):
        reply = self.unread[0]
        read_next(self)
        counts[0] += 1
        counts[1] += len(reply.rows or [])
    PipelinedReads._read_next = counted_read
store.run = counted
plan = compute_plan(store, task)[0]
store.run = run
if PipelinedReads is not None:
    PipelinedReads._read_next = read_next
def timed(fn):
    times = []
    for _ in range(15):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)[7], sum(times) / len(times)
case = read_case(store, task)
plan_ms, plan_mean_ms = timed(lambda: compute_plan(store, task))
reference_ms, reference_mean_ms = timed(lambda: plan_in_memory(case))
print(json.dumps({"plan_ms": plan_ms, "plan_mean_ms": plan_mean_ms,
                  "reference_ms": reference_ms, "reference_mean_ms": reference_mean_ms,
                  "statements": counts[0], "rows": counts[1],
                  "plan": plan.model_dump(mode="json")}))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the commit to compare against")
    parser.add_argument("--region", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with sides(args.base, "provrepair-plan-ab-") as (tmp, envs), shared_server(tmp, envs):
        case = target_case(args.region)
        with open_store() as store:
            ingest_case(store, case, replace=True)
        report(paired_rounds(MEASURE, [case.task_id], envs, args.rounds))


def report(runs: dict[str, list[dict[str, object]]]) -> None:
    if runs["old"][0]["plan"] != runs["new"][0]["plan"]:
        raise SystemExit("the two planners disagree on the plan")
    for key in ("plan_ms", "plan_mean_ms"):
        print(f"{key}:", end=" ")
        print_ratios(runs, key)
    for side, results in runs.items():
        plan, mean, ref = (statistics.median(float(r[key]) for r in results)  # type: ignore[arg-type]
                           for key in ("plan_ms", "plan_mean_ms", "reference_ms"))
        print(f"{side}: plan p50 {plan:.1f} ms (mean {mean:.1f}), in-memory reference p50 "
              f"{ref:.1f} ms (×{plan / ref:.1f}), {results[0]['statements']} statements, "
              f"{results[0]['rows']} rows")


if __name__ == "__main__":
    main()
