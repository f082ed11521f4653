"""`provrepair bench sweep`: every method over provenance fidelity levels → one table and one
plot (recovery and claim-invalidation F1 against fidelity, one line per method).

    for each level:  bench generate --fidelity level   → <out>/cases-<level>/   (kept)
                     bench run                         → <out>/results-<level>/ (resumable)
    <out>/sweep.md, sweep.csv, sweep.json, quality_vs_fidelity.png

The same seed at every level gives the same sessions and faults; only the recording (and the
unrecorded flow, repair/bench/fidelity.py) differs, so the levels compare like with like. A
rerun reuses the generated cases whose manifest matches and resumes the runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from provrepair.provenance.errors import InputError
from provrepair.provenance.progress import NO_PROGRESS, Progress
from provrepair.repair.bench.generate import MANIFEST, check_fidelity, generate_benchmark
from provrepair.repair.bench.plot import plot_sweep, require_matplotlib
from provrepair.repair.bench.run import parse_methods, run_benchmark
from provrepair.repair.bench.tables import Table, label

DEFAULT_LEVELS = (1.0, 0.9, 0.8, 0.6)
METRICS = ("recovery", "recurrence", "claim_f1", "replay_ratio")
SHORT = {"recovery": "Rec", "recurrence": "Recur", "claim_f1": "F1", "replay_ratio": "RR"}


def run_sweep(levels: list[float], seed: int, methods: str, out: Path, *,
              limit: int | None = None,
              progress: Progress = NO_PROGRESS) -> tuple[dict[str, Any], str]:
    require_matplotlib()
    parse_methods(methods)  # a bad name fails before any case is generated
    if not levels:
        raise InputError("--levels: give at least one fidelity level")
    for level in levels:
        check_fidelity(level)
    results: dict[float, dict[str, Any]] = {}
    for level in levels:
        cases = _cases(seed, level, out, limit, progress)
        summary, _ = run_benchmark(cases, methods, "offline", None, out / f"results-{level}",
                                   progress=progress)
        results[level] = summary["methods"]
    n = _case_count(out / f"cases-{levels[0]}")
    sweep: dict[str, Any] = {"seed": seed, "cases": n, "levels": levels,
             "methods": {m: {str(level): _metrics(results[level].get(m)) for level in levels}
                         for m in results[levels[0]]}}
    table = sweep_table(sweep)
    text = f"## Quality against provenance fidelity\n\nseed {seed}, N = {n} per level.\n\n" \
        + table.markdown() + "\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / "sweep.md").write_text(text, encoding="utf-8")
    (out / "sweep.csv").write_text(table.csv(), encoding="utf-8")
    (out / "sweep.json").write_text(json.dumps(sweep, indent=2) + "\n", encoding="utf-8")
    plot_sweep({label(m): v for m, v in sweep["methods"].items()}, levels, out, n)
    return sweep, text


def _cases(seed: int, level: float, out: Path, limit: int | None, progress: Progress) -> Path:
    folder = out / f"cases-{level}"
    manifest = folder / MANIFEST
    if manifest.exists():
        known = json.loads(manifest.read_text(encoding="utf-8"))
        if known.get("seed") == seed and known.get("fidelity") == level and \
                (limit is None or known.get("cases") == limit):
            return folder
        for stale in folder.glob("*.json"):  # another sample: no old case may stay
            stale.unlink()
    generate_benchmark(seed, folder, limit=limit, fidelity=level, progress=progress)
    return folder


def _case_count(folder: Path) -> int:
    return int(json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["cases"])


def _metrics(summary: dict[str, Any] | None) -> dict[str, Any]:
    if not summary or summary.get("status") != "run":
        return {m: None for m in METRICS}
    return {m: summary.get(m) for m in METRICS}


def sweep_table(sweep: dict[str, Any]) -> Table:
    levels = [str(level) for level in sweep["levels"]]
    columns = ["Method", *[f"{SHORT[m]} @{level}" for m in METRICS for level in levels]]
    rows = [[label(method), *[by_level[level][m] for m in METRICS for level in levels]]
            for method, by_level in sweep["methods"].items()]
    return Table("sweep", f"Every method by provenance fidelity (N = {sweep['cases']} per level)",
                 columns, rows)
