"""Traces of the whole generated corpus read back: misses and over-approximation (issue 28).

    python bench/trace_soundness.py [--seed 7] [--limit N] [--json]

Every case `provrepair bench generate --seed S` makes, and the bundled example, exported as
the run an outside agent would have traced (loaders/trace_export.py: OTLP made with the real
OpenTelemetry SDK, messages as JSON strings and as structured values, each request carrying
the whole history or what the step cited; an OpenAI-style transcript with what each request
carried and what each memory write stores, and without: the conservative reading), read back
by the loaders, and for every memory record as the single fault, planned by the reference
planner on both the native case and the read-back run. Reports, per export: faults, faults with a
miss (a natively affected node the read-back plan leaves alone; must be 0), the summed
affected / replayed / quarantined / dependency edges against native with their ratios, and
the mean over faults of each fault's affected ratio. A record the run never showed or wrote
is not in the read-back run ("not in the run"): natively it must affect nothing but itself
(else it counts as a miss), and it is left out of the mean.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from provrepair.benchmark.generate import generate_cases
from provrepair.benchmark.soundness import check_faults
from provrepair.loaders.case_files import load_cases
from provrepair.loaders.trace_export import EXPORTS, Exported, read_back
from provrepair.provenance.edges import derive_edges
from provrepair.provenance.models import Case

REPO = Path(__file__).resolve().parent.parent

EXAMPLE = REPO / "examples" / "shopping_poisoned_price.json"
FIELDS = ("affected", "replayed", "quarantined")


def measure(cases: list[Case], name: str, export: Callable[[Case], Exported]) -> dict[str, Any]:
    row: dict[str, Any] = {"export": name, "faults": 0, "missed": 0, "edges": [0, 0],
                           "ratio_sum": 0.0, "absent": 0, **{f: [0, 0] for f in FIELDS}}
    started = time.perf_counter()
    for native in cases:
        exported = export(native)
        ingested = read_back(name, exported, native.task_id)
        row["edges"][0] += len(derive_edges(native))
        row["edges"][1] += len(derive_edges(ingested))
        for check in check_faults(native, ingested, exported.origin):
            row["faults"] += 1
            row["missed"] += bool(check.missed)
            if check.present:
                row["ratio_sum"] += check.ingested[0] / max(check.native[0], 1)
            else:
                row["absent"] += 1
            for i, f in enumerate(FIELDS):
                row[f][0] += check.native[i]
                row[f][1] += check.ingested[i]
    present = max(row["faults"] - row["absent"], 1)
    row["mean_affected_ratio"] = round(row.pop("ratio_sum") / present, 2)
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--limit", type=int, default=None, help="a stratified sample")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    cases = [*generate_cases(args.seed, limit=args.limit), *load_cases([EXAMPLE])]
    rows = [measure(cases, name, export) for name, export in EXPORTS.items()]
    if args.json:
        print(json.dumps({"seed": args.seed, "cases": len(cases), "rows": rows}, indent=1))
        return 0
    print(f"{len(cases)} cases (seed {args.seed} + the bundled example); sums over every "
          "record as the single fault; native → read back (×)")
    print("| export | faults | not in the run | missed | affected | mean of per-fault affected "
          "ratios | replayed | quarantined | edges |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cells = [f"{r[f][0]} → {r[f][1]} (×{r[f][1] / max(r[f][0], 1):.2f})"
                 for f in (*FIELDS, "edges")]
        cells.insert(1, f"×{r['mean_affected_ratio']:.2f}")
        print(f"| {r['export']} | {r['faults']} | {r['absent']} | {r['missed']} | "
              + " | ".join(cells) + " |")
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
