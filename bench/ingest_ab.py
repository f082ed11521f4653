"""Ingest A/B: this working tree against an earlier commit, `ingest_case` of the same case.

    .venv/bin/python bench/ingest_ab.py --base REV [--elements 100000] [--rounds 5]

Writes bench/ingest.py's synthetic case of ~N elements to a temporary JSON file and starts
one throwaway embedded server, then alternates fresh processes of the base commit (a `git
worktree` of REV first on PYTHONPATH, see bench/ab.py) and of the installed working tree.
Each process parses the file and derives its edges (untimed), times `ingest_case` of a new
task (the cyclic GC paused, as `provrepair ingest` runs it), then deletes the task, so every
round starts from the same store. Printed: the per-round new/old ratios (paired in time, so
machine noise hits both alike), their median, and each side's median elements per second.
"""

from __future__ import annotations

import argparse

from ab import (  # bench/ (the script's own folder, first on sys.path)
    case_file_rounds,
    print_element_rates,
    print_ratios,
)

MEASURE = r'''
import gc, json, sys, time
from provrepair.loaders import strict_json
from provrepair.provenance.edges import derive_edges
from provrepair.provenance.ingest import delete_task, ingest_case
from provrepair.provenance.store.config import open_store
from provrepair.provenance.validate import parse_case
case = parse_case(strict_json.loads(open(sys.argv[1], encoding="utf-8").read()))
edges = derive_edges(case)
store = open_store(migrate=True)
gc.disable()
start = time.perf_counter()
status = ingest_case(store, case, edges=edges).status
seconds = time.perf_counter() - start
gc.enable()
delete_task(store, case.task_id)
print(json.dumps({"seconds": seconds, "status": status, "elements":
                  len(case.session) + len(case.memory_store) + len(case.trace) + len(edges)}))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the commit to compare against")
    parser.add_argument("--elements", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    runs = case_file_rounds(MEASURE, args.base, "ingest-ab", args.elements, args.rounds,
                            server=True)
    if any(r["status"] != "created" for side in runs.values() for r in side):
        raise SystemExit("an ingest did not create its task")
    print_ratios(runs, "seconds")
    print_element_rates(runs)


if __name__ == "__main__":
    main()
