"""`provrepair bench sweep`: every method over provenance fidelity levels, replay-noise rates
and seeds → one table per noise rate (mean ± standard deviation over the seeds) and plots.

    for each seed, each level:  bench generate --seed S --fidelity L → <out>/seed-S/cases-L/
        for each noise rate R:  bench run --replay-noise R           → <out>/seed-S/results-L-noise-R/
    <out>/sweep.md, sweep.csv, sweep.json, quality_vs_fidelity-noise-R.png
    <out>/outcomes.json, readings.json, comparisons.md   (report.py: what BENCHMARKS.md quotes)

sweep.md compares with the paper's Table 2 (`paper_table`), or with the table the case set
names (its `paper_tables(sweep, outcomes)`: the transfer set's Table 3 form,
benchmark/transfer/table3.py).

The same seed at every level gives the same sessions and faults; only the recording (and the
unrecorded flow, benchmark/fidelity.py) differs, so the levels compare like with like; the
noise draws are seeded by (seed, case, step) (noise.py), the same for every method. A rerun
reuses the generated cases whose manifest matches exactly (seed, fidelity, share and the
number of cases asked for: a folder holding a `--limit` sample is regenerated for a full run,
and the run says so) and resumes the runs.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from provrepair.benchmark import generate as generate_module
from provrepair.benchmark.generate import MANIFEST, check_fidelity, check_share
from provrepair.benchmark.lookalikes import BENIGN_KINDS, COPY_KINDS, NAMESPACE_KINDS
from provrepair.benchmark.noise import check_noise
from provrepair.benchmark.pair import SWEEP_METHOD
from provrepair.benchmark.plot import plot_sweep, require_matplotlib
from provrepair.benchmark.report import OUTCOMES, write_report
from provrepair.benchmark.run import parse_methods, run_benchmark
from provrepair.benchmark.tables import (
    PAPER,
    PAPER_METRICS,
    RULES,
    Table,
    fmt,
    label,
    precision_recall,
    sweep_counts,
)
from provrepair.benchmark.workers import check_jobs, worker_pool
from provrepair.provenance.errors import InputError
from provrepair.provenance.progress import NO_PROGRESS, Progress


class CaseSet(Protocol):
    """What `bench sweep --set NAME` needs of a case set's module (benchmark/generate.py is
    the controlled set's): its name (written into each manifest, so a folder of one set is
    never taken for another's), how many cases a seed and limit give, and the generator."""

    SET_NAME: str

    # optional: DEFAULTS (the options a user leaves out: "fidelity", "answerable", "levels";
    # commands/bench.py), summary_table(manifest) -> str (what `bench generate` prints) and
    # paper_tables(sweep, outcomes) -> list[Table] (the paper's table for this set)

    def case_count(self, seed: int, limit: int | None) -> int: ...

    def generate_benchmark(self, seed: int, out: Path, *, limit: int | None = None,
                           fidelity: float = 1.0, answerable: float = 0.0,
                           progress: Progress = NO_PROGRESS, tag: str = "") -> dict[str, Any]: ...

DEFAULT_LEVELS = (1.0, 0.8, 0.6)
DEFAULT_SEEDS = (42, 7, 1234)
DEFAULT_NOISE = (0.0, 0.05)
METRICS = ("recovery", "state_recovery", "recurrence", "benign_preservation", "claim_f1",
           "replay_ratio")
SHORT = {"recovery": "Rec", "state_recovery": "SRec", "recurrence": "Recur",
         "benign_preservation": "BP", "claim_f1": "F1", "replay_ratio": "RR"}
# kept in sweep.json beside METRICS (the paper's Table 3 form shows them)
STORED = (*METRICS, "faulty_removal", "llm_calls")


@dataclass(frozen=True)
class Grid:
    """What one sweep runs: every seed × level × noise rate."""

    levels: tuple[float, ...] = DEFAULT_LEVELS
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    noise: tuple[float, ...] = DEFAULT_NOISE

    def check(self) -> None:
        for name, values in (("--levels", self.levels), ("--seeds", self.seeds),
                             ("--replay-noise", self.noise)):
            if not values:
                raise InputError(f"{name}: give at least one value")
        for level in self.levels:
            check_fidelity(level)
        for rate in self.noise:
            check_noise(rate)


def run_sweep(grid: Grid, methods: str, out: Path, *, limit: int | None = None,
              answerable: float = 0.5, jobs: int = 1, progress: Progress = NO_PROGRESS,
              case_set: CaseSet | None = None) -> tuple[dict[str, Any], str]:
    """`jobs` worker processes, shared by every run of the sweep (workers.py). `case_set`
    builds the cases of one seed and level (`bench sweep --set`; the controlled set, the
    module benchmark/generate.py, by default)."""
    cases_of: CaseSet = case_set if case_set is not None else generate_module
    require_matplotlib()
    parse_methods(methods)  # a bad name fails before any case is generated
    grid.check()
    check_share(answerable)
    check_jobs(jobs)
    runs: dict[tuple[int, float, float], dict[str, Any]] = {}
    cases: dict[tuple[int, float], int] = {}
    gold: dict[tuple[int, float], int] = {}
    with worker_pool(jobs) as pool:
        for seed in grid.seeds:
            for level in grid.levels:
                folder = _cases(Wanted(seed, level, limit, answerable, cases_of),
                                out / f"seed-{seed}", progress)
                for rate in grid.noise:
                    summary, _ = run_benchmark(
                        folder, methods, "offline", None,
                        out / f"seed-{seed}" / f"results-{level}-noise-{rate:g}",
                        replay_noise=rate, noise_seed=seed, pool=pool,
                        tag=f"fidelity {level}, replay noise {rate:g}, seed {seed}",
                        progress=progress)
                    runs[(seed, level, rate)] = summary["methods"]
                    cases[(seed, level)] = summary["cases"]
                    gold[(seed, level)] = summary["gold_claims"]
    sweep = _sweep(grid, runs, cases, gold, answerable) | {"case_set": cases_of.SET_NAME}
    out.mkdir(parents=True, exist_ok=True)
    write_report(out)  # outcomes.json, readings.json, comparisons.md (report.py)
    own = getattr(cases_of, "paper_tables", None)
    paper = own(sweep, json.loads((out / OUTCOMES).read_text(encoding="utf-8"))) if own else None
    text = sweep_text(sweep, paper)
    (out / "sweep.md").write_text(text, encoding="utf-8")
    (out / "sweep.csv").write_text("".join(t.csv() for t in [*sweep_tables(sweep), *(paper or [])]),
                                   encoding="utf-8")
    (out / "sweep.json").write_text(json.dumps(sweep, indent=2) + "\n", encoding="utf-8")
    for rate in grid.noise:
        means = {label(m): {str(lv): {k: v["mean"] for k, v in by[str(rate)][str(lv)].items()}
                            for lv in grid.levels}
                 for m, by in sweep["methods"].items()}
        plot_sweep(means, list(grid.levels), out, sweep["cases"],
                   suffix=f"noise-{rate:g}", detail=f"replay noise {rate:g}, "
                   f"mean of {len(grid.seeds)} seeds")
    return sweep, text


@dataclass(frozen=True)
class Wanted:
    """The cases of one level, as `bench generate` makes them."""

    seed: int
    fidelity: float
    limit: int | None
    answerable: float
    case_set: CaseSet = generate_module

    @property
    def count(self) -> int:
        return self.case_set.case_count(self.seed, self.limit)

    def matches(self, manifest: dict[str, Any]) -> bool:
        return (manifest.get("seed") == self.seed and manifest.get("fidelity") == self.fidelity
                and manifest.get("answerable_share") == self.answerable
                and manifest.get("cases") == self.count
                and manifest.get("case_set", generate_module.SET_NAME) == self.case_set.SET_NAME)


def _cases(wanted: Wanted, out: Path, progress: Progress) -> Path:
    folder = out / f"cases-{wanted.fidelity}"
    manifest = folder / MANIFEST
    if manifest.exists():
        found = json.loads(manifest.read_text(encoding="utf-8"))
        if wanted.matches(found):
            return folder
        progress.note(f"note: {folder} holds another sample (seed {found.get('seed')}, "
                      f"fidelity {found.get('fidelity')}, {found.get('cases')} cases; "
                      f"wanted {wanted.count}): generating it again")
        for stale in folder.glob("*.json"):  # another sample: no old case may stay
            stale.unlink()
    wanted.case_set.generate_benchmark(
        wanted.seed, folder, limit=wanted.limit, fidelity=wanted.fidelity,
        answerable=wanted.answerable, progress=progress,
        tag=f"fidelity {wanted.fidelity}, seed {wanted.seed}")
    return folder


def _sweep(grid: Grid, runs: dict[tuple[int, float, float], dict[str, Any]],
           cases: dict[tuple[int, float], int], gold: dict[tuple[int, float], int],
           answerable: float) -> dict[str, Any]:
    first = runs[(grid.seeds[0], grid.levels[0], grid.noise[0])]
    counts = set(cases.values())
    return {
        "seeds": list(grid.seeds), "levels": list(grid.levels), "replay_noise": list(grid.noise),
        "cases": counts.pop() if len(counts) == 1 else sorted(counts),
        "answerable_share": answerable,
        "gold_claims": {str(lv): [gold[(s, lv)] for s in grid.seeds] for lv in grid.levels},
        "methods": {m: {str(rate): {str(lv): _spread([runs[(s, lv, rate)].get(m) for s in grid.seeds])
                                    for lv in grid.levels} for rate in grid.noise}
                    for m in first},
        "echo_sweep": {f"noise {rate:g} @{lv}": _summed(
            [(runs[(s, lv, rate)].get(SWEEP_METHOD) or {}).get("echo_sweep") or {}
             for s in grid.seeds]) for rate in grid.noise for lv in grid.levels},
    }


def _summed(counts: list[dict[str, dict[str, int]]]) -> dict[str, dict[str, int]]:
    """The echo sweep's counts per kind (tables.sweep_counts), summed over the seeds."""
    return sweep_counts({"sweep": c} for c in counts)


def echo_table(sweep: dict[str, Any]) -> Table:
    """Precision and recall of the echo sweep per setting, summed over the seeds: as
    reported, by its value match alone, and by the rule before issue 39."""
    settings = list(sweep.get("echo_sweep", {}))
    scopes = (("task", (*COPY_KINDS, *BENIGN_KINDS)), ("namespace", NAMESPACE_KINDS))
    rows = []
    for scope, kinds in scopes:
        for name, column in RULES:
            cells = []
            for setting in settings:
                p, r = precision_recall(sweep["echo_sweep"][setting], kinds, column)
                cells.append("--" if p is None and r is None else
                             f"{fmt(p)} / {fmt(r)}")
            rows.append([f"{scope} scope, {name}", *cells])
    return Table("echo-sweep", f"The echo sweep ({label(SWEEP_METHOD)}): precision / recall on "
                 "the look-alikes, summed over seeds", ["Rule", *settings], rows)


def _spread(summaries: list[dict[str, Any] | None]) -> dict[str, Any]:
    """metric → mean and sample standard deviation over the seeds (None where not run)."""
    out: dict[str, Any] = {}
    for metric in STORED:
        values = [s.get(metric) for s in summaries if s and s.get("status") == "run"]
        known = [float(v) for v in values if v is not None]
        out[metric] = {"mean": statistics.fmean(known) if known else None,
                       "sd": statistics.stdev(known) if len(known) > 1 else None,
                       "values": values} if values else {"mean": None, "sd": None, "values": []}
    return out


def cell(stat: dict[str, Any]) -> str:
    if not stat["values"]:
        return "not run"
    if stat["mean"] is None:
        return "--"
    return f"{stat['mean']:.3f}" + (f" ± {stat['sd']:.3f}" if stat["sd"] is not None else "")


def sweep_tables(sweep: dict[str, Any]) -> list[Table]:
    levels = [str(level) for level in sweep["levels"]]
    columns = ["Method", *[f"{SHORT[m]} @{level}" for m in METRICS for level in levels]]
    tables = []
    for rate in sweep["replay_noise"]:
        rows = [[label(method), *[cell(by[str(rate)][level][m]) for m in METRICS for level in levels]]
                for method, by in sweep["methods"].items()]
        tables.append(Table(f"sweep-noise-{rate:g}",
                            f"Every method by fidelity, replay noise {rate:g} "
                            f"(N = {sweep['cases']} cases per level and seed, "
                            f"seeds {', '.join(map(str, sweep['seeds']))}; mean ± sd over seeds)",
                            columns, rows))
    return tables


def settings(sweep: dict[str, Any]) -> list[tuple[str, str]]:
    return [(str(rate), str(level)) for rate in sweep["replay_noise"] for level in sweep["levels"]]


def agreement(sweep: dict[str, Any], metric: str, rate: str, level: str) -> tuple[int, int]:
    """(pairs of methods ordered as in the paper's Table 2, pairs compared) on `metric` at
    one setting; pairs tied on either side are not compared."""
    index = PAPER_METRICS.index(metric)
    ours = {m: by[rate][level][metric]["mean"] for m, by in sweep["methods"].items()
            if m in PAPER and PAPER[m][index] is not None}
    known = [m for m, v in ours.items() if v is not None]
    same = total = 0
    for i, a in enumerate(known):
        for b in known[i + 1:]:
            paper = (PAPER[a][index] or 0.0) - (PAPER[b][index] or 0.0)
            mine = ours[a] - ours[b]
            if abs(paper) < 1e-9 or abs(mine) < 1e-9:
                continue
            total += 1
            same += (paper > 0) == (mine > 0)
    return same, total


def paper_table(sweep: dict[str, Any], metric: str) -> Table:
    """One metric of the paper's Table 2 beside ours at every setting (means over seeds), and
    how many method pairs each setting orders as the paper does."""
    index = PAPER_METRICS.index(metric)
    cols = settings(sweep)
    rows: list[list[Any]] = [
        [label(m), PAPER[m][index], *[cell(sweep["methods"][m][r][lv][metric]) for r, lv in cols]]
        for m in sweep["methods"] if m in PAPER]
    rows.append(["pairs ordered as the paper", "", *[
        "{}/{}".format(*agreement(sweep, metric, r, lv)) for r, lv in cols]])
    return Table(f"paper-{metric}", f"{SHORT[metric]}: the paper's Table 2 (GPT-4o, N = 150) "
                 f"beside ours (mean ± sd over seeds)",
                 ["Method", "Paper", *[f"noise {r} @{lv}" for r, lv in cols]], rows)


def sweep_text(sweep: dict[str, Any], paper: list[Table] | None = None) -> str:
    """The sweep as Markdown; `paper`: the case set's own comparison with the paper (None:
    the paper's Table 2 on recovery and claim F1)."""
    gold = "; ".join(f"@{lv}: {' / '.join(map(str, counts))}"
                     for lv, counts in sweep["gold_claims"].items())
    # headings one level down from a page's: BENCHMARKS.md quotes this file in a section
    named = sweep.get("case_set", generate_module.SET_NAME)
    head = (f"### Quality against provenance fidelity and replay noise"
            f"{'' if named == generate_module.SET_NAME else f' (the {named} set)'}\n\n"
            f"Seeds {', '.join(map(str, sweep['seeds']))}; N = {sweep['cases']} cases per level "
            f"and seed; answerable share {sweep['answerable_share']}. Gold contaminated claims "
            f"(claim F1's positives, every turn) per seed: {gold}.\n\n")
    if paper is None:
        paper = [paper_table(sweep, m) for m in ("recovery", "claim_f1")]
    tables = [*sweep_tables(sweep), *paper]
    if any(sweep.get("echo_sweep", {}).values()):
        tables.append(echo_table(sweep))
    return head + "\n\n".join(t.markdown(level=4) for t in tables) + "\n"
