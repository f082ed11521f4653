"""`provrepair bench sweep`: every method over provenance fidelity levels → one table and one
plot (recovery and claim-invalidation F1 against fidelity, one line per method).

    for each level:  bench generate --fidelity level   → <out>/cases-<level>/   (kept)
                     bench run                         → <out>/results-<level>/ (resumable)
    <out>/sweep.md, sweep.csv, sweep.json, quality_vs_fidelity.png

The same seed at every level gives the same sessions and faults; only the recording (and the
unrecorded flow, benchmark/fidelity.py) differs, so the levels compare like with like. A
rerun reuses the generated cases whose manifest matches and resumes the runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from provrepair.benchmark.generate import (
    MANIFEST,
    check_fidelity,
    check_share,
    generate_benchmark,
)
from provrepair.benchmark.plot import plot_sweep, require_matplotlib
from provrepair.benchmark.run import parse_methods, run_benchmark
from provrepair.benchmark.tables import Table, label
from provrepair.provenance.errors import InputError
from provrepair.provenance.progress import NO_PROGRESS, Progress

DEFAULT_LEVELS = (1.0, 0.9, 0.8, 0.6)
METRICS = ("recovery", "recurrence", "claim_f1", "replay_ratio")
SHORT = {"recovery": "Rec", "recurrence": "Recur", "claim_f1": "F1", "replay_ratio": "RR"}


def run_sweep(levels: list[float], seed: int, methods: str, out: Path, *,
              limit: int | None = None, answerable: float = 0.5,
              progress: Progress = NO_PROGRESS) -> tuple[dict[str, Any], str]:
    require_matplotlib()
    parse_methods(methods)  # a bad name fails before any case is generated
    if not levels:
        raise InputError("--levels: give at least one fidelity level")
    check_share(answerable)
    for level in levels:
        check_fidelity(level)
    results: dict[float, dict[str, Any]] = {}
    for level in levels:
        cases = _cases(Wanted(seed, level, limit, answerable), out, progress)
        summary, _ = run_benchmark(cases, methods, "offline", None, out / f"results-{level}",
                                   progress=progress)
        results[level] = summary["methods"]
    n = _case_count(out / f"cases-{levels[0]}")
    sweep: dict[str, Any] = {"seed": seed, "cases": n, "levels": levels,
                             "answerable_share": answerable,
             "methods": {m: {str(level): _metrics(results[level].get(m)) for level in levels}
                         for m in results[levels[0]]}}
    table = sweep_table(sweep)
    text = (f"## Quality against provenance fidelity\n\nseed {seed}, N = {n} per level, "
            f"answerable share {answerable}.\n\n") \
        + table.markdown() + "\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / "sweep.md").write_text(text, encoding="utf-8")
    (out / "sweep.csv").write_text(table.csv(), encoding="utf-8")
    (out / "sweep.json").write_text(json.dumps(sweep, indent=2) + "\n", encoding="utf-8")
    plot_sweep({label(m): v for m, v in sweep["methods"].items()}, levels, out, n)
    return sweep, text


@dataclass(frozen=True)
class Wanted:
    """The cases of one level, as `bench generate` makes them."""

    seed: int
    fidelity: float
    limit: int | None
    answerable: float

    def matches(self, manifest: dict[str, Any]) -> bool:
        return (manifest.get("seed") == self.seed and manifest.get("fidelity") == self.fidelity
                and manifest.get("answerable_share") == self.answerable
                and (self.limit is None or manifest.get("cases") == self.limit))


def _cases(wanted: Wanted, out: Path, progress: Progress) -> Path:
    folder = out / f"cases-{wanted.fidelity}"
    manifest = folder / MANIFEST
    if manifest.exists():
        if wanted.matches(json.loads(manifest.read_text(encoding="utf-8"))):
            return folder
        for stale in folder.glob("*.json"):  # another sample: no old case may stay
            stale.unlink()
    generate_benchmark(wanted.seed, folder, limit=wanted.limit, fidelity=wanted.fidelity,
                       answerable=wanted.answerable, progress=progress)
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
