"""Case-file prep A/B: this working tree against an earlier commit, on the same case text.

    .venv/bin/python bench/prep_ab.py --base REV [--elements 100000] [--rounds 7]

Writes bench/ingest.py's synthetic case of ~N elements to a temporary JSON file, then
alternates fresh processes of the base commit (a `git worktree` of REV first on PYTHONPATH,
see bench/ab.py) and of the installed working tree. Each process reads the file as
`provrepair ingest` does (the strict JSON reader, `parse_case`, `derive_edges`) once, with
the cyclic GC paused as ingest pauses it, and reports the seconds. Printed: per-round
new/old ratios (paired in time, so machine noise hits both alike), their median, and each
side's median elements per second. Both sides must derive the same number of edges.
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
from provrepair.provenance.validate import parse_case
text = open(sys.argv[1], encoding="utf-8").read()
gc.disable()
start = time.perf_counter()
case = parse_case(strict_json.loads(text))
edges = derive_edges(case)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds,
                  "elements": len(case.session) + len(case.memory_store) + len(case.trace)
                  + len(edges), "edges": len(edges)}))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the commit to compare against")
    parser.add_argument("--elements", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    runs = case_file_rounds(MEASURE, args.base, "prep-ab", args.elements, args.rounds)
    if {r["edges"] for r in runs["old"]} != {r["edges"] for r in runs["new"]}:
        raise SystemExit("the two sides derive different edges")
    print_ratios(runs, "seconds")
    print_element_rates(runs)


if __name__ == "__main__":
    main()
