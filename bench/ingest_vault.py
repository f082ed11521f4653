"""Bulk ingest of many tasks with evaluation blocks: does the time per task stay flat?

    .venv/bin/python bench/ingest_vault.py --base REV [--tasks 1500] [--window 300]

Every ingest writes the task's evaluation record to the vault (`merge_evaluation`, a MERGE on
eval_key) and prunes older ones (`prune_evaluations`, by task_key). Without vault indexes
both scanned every :EvalRecord, so bulk ingest grew quadratically with the number of tasks.
This stores `--tasks` copies (distinct task ids) of the generated benchmark cases, once with
the commit REV (a `git worktree` put first on PYTHONPATH, as bench/plan_ab.py does) and once
with this tree, each against its own fresh throwaway embedded server (a shared server makes
whichever side runs second slower: it inherits the first side's data and persistence work),
and prints the milliseconds per task over the first and the last `--window` tasks of each.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ab import run_snippet, sides  # bench/ (the script's own folder, first on sys.path)

from provrepair.provenance.store.embedded import EmbeddedServer

INGEST = r'''
import json, os, sys, time
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.config import open_store
from provrepair.provenance.validate import parse_case
from provrepair.benchmark.cases import retask
from provrepair.benchmark.generate import generate_cases
tasks, window = int(sys.argv[1]), int(sys.argv[2])
raws = [c.model_dump(mode="json") for c in generate_cases(42, limit=30)]
cases = [parse_case(retask(raws[i % len(raws)], f"bulk-{i:05d}")) for i in range(tasks)]
store = open_store(migrate=True)
times = []
for case in cases:
    start = time.perf_counter()
    ingest_case(store, case)
    times.append(time.perf_counter() - start)
first = sum(times[:window]) / window * 1000
last = sum(times[-window:]) / window * 1000
print(json.dumps({"first_ms": first, "last_ms": last}))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="a commit without the vault indexes")
    parser.add_argument("--tasks", type=int, default=1500)
    parser.add_argument("--window", type=int, default=300)
    args = parser.parse_args()
    with sides(args.base, "provrepair-ingest-vault-") as (tmp, envs):
        for side, env in envs.items():
            got = fresh_server_run(tmp / f"home-{side}", env, args)
            print(f"{side}: first {args.window} tasks {got['first_ms']:.1f} ms/task, "
                  f"last {args.window} {got['last_ms']:.1f} ms/task "
                  f"(×{got['last_ms'] / got['first_ms']:.2f})")


def fresh_server_run(home: Path, env: dict[str, str], args: argparse.Namespace) -> dict[str, float]:
    server = EmbeddedServer(home)
    server.start()
    try:
        result: dict[str, float] = run_snippet(
            INGEST, [str(args.tasks), str(args.window)],
            dict(env, PROVREPAIR_HOME=str(home), PROVREPAIR_GRAPH="bulk"))
        return result
    finally:
        server.stop()


if __name__ == "__main__":
    main()
