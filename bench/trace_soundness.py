"""Traces of the whole generated corpus read back: misses and over-approximation (issues 28,
36).

    python bench/trace_soundness.py [--seed 7] [--limit N] [--per-shape N] [--json]

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

Then the shape corpus (benchmark/trace_shapes.py: what real agents do — several records per
memory operation, consolidations, lineage on search results, sub-agents answering through a
tool result or a system or user message, nested or in linked traces, parallel tool calls,
failed and silently ineffective updates, reasoning, memory in the system prompt), `--per-shape`
runs of each (default 20), exported with the real SDK (OTLP JSON strings, structured values,
protobuf) and as transcripts (requests and write evidence, requests only, plain;
benchmark/shape_export.py), the same check per shape and export.
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
from provrepair.benchmark.shape_export import EXPORTS as SHAPE_EXPORTS
from provrepair.benchmark.shape_export import read_back as read_shape
from provrepair.benchmark.soundness import check_faults
from provrepair.benchmark.trace_shapes import SHAPES, shape_runs
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


def measure_shapes(seed: int, per_shape: int) -> list[dict[str, Any]]:
    """One row per (shape, export) of the shape corpus."""
    rows = []
    for shape in SHAPES:
        runs = shape_runs(seed, per_shape, [shape])
        for name, export in SHAPE_EXPORTS.items():
            row: dict[str, Any] = {"shape": shape, "export": name, "faults": 0, "missed": 0,
                                   "absent": 0, "ratio_sum": 0.0, "affected": [0, 0]}
            for run in runs:
                traced = export(run)
                ingested = read_shape(name, traced, run.case.task_id)
                for check in check_faults(run.case, ingested, traced.origin):
                    row["faults"] += 1
                    row["missed"] += bool(check.missed)
                    row["absent"] += not check.present
                    row["ratio_sum"] += check.ingested[0] / max(check.native[0], 1)
                    row["affected"][0] += check.native[0]
                    row["affected"][1] += check.ingested[0]
            row["mean_affected_ratio"] = round(row.pop("ratio_sum") / max(row["faults"], 1), 2)
            rows.append(row)
    return rows


def print_shapes(rows: list[dict[str, Any]], per_shape: int, seed: int) -> None:
    exports = list(dict.fromkeys(r["export"] for r in rows))
    print(f"\nshape corpus: {per_shape} run(s) per shape (seed {seed}); per export: misses "
          "over faults, then affected per fault, read back / native: mean of the per-fault "
          "ratios (summed ratio)")
    print("| shape | " + " | ".join(exports) + " |")
    print("|---|" + "---|" * len(exports))
    for shape in dict.fromkeys(r["shape"] for r in rows):
        cells = []
        for export in exports:
            r = next(x for x in rows if x["shape"] == shape and x["export"] == export)
            summed = r["affected"][1] / max(r["affected"][0], 1)
            cells.append(f"{r['missed']}/{r['faults']}: ×{r['mean_affected_ratio']:.2f} "
                         f"(×{summed:.2f})")
        print(f"| {shape} | " + " | ".join(cells) + " |")
    totals = {e: (sum(r["missed"] for r in rows if r["export"] == e),
                  sum(r["faults"] for r in rows if r["export"] == e),
                  sum(r["absent"] for r in rows if r["export"] == e)) for e in exports}
    print("| all: missed / faults (not in the run) | " + " | ".join(
        f"{m} / {f} ({a})" for m, f, a in totals.values()) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--limit", type=int, default=None, help="a stratified sample")
    parser.add_argument("--per-shape", type=int, default=20,
                        help="runs of each shape of the shape corpus (0: none)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    cases = [*generate_cases(args.seed, limit=args.limit), *load_cases([EXAMPLE])]
    rows = [measure(cases, name, export) for name, export in EXPORTS.items()]
    shapes = measure_shapes(args.seed, args.per_shape) if args.per_shape else []
    if args.json:
        print(json.dumps({"seed": args.seed, "cases": len(cases), "rows": rows,
                          "per_shape": args.per_shape, "shapes": shapes}, indent=1))
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
    if shapes:
        print_shapes(shapes, args.per_shape, args.seed)
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
