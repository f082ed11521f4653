"""`provrepair bench generate|run|sweep|clean`: the controlled benchmark of the paper, offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from provrepair.commands.output import ProgressBar, emit_json


@click.group()
def bench() -> None:
    """Generate the controlled benchmark and run every method on it (the paper's tables)."""


@bench.command()
@click.option("--seed", type=int, default=42, show_default=True, help="Random seed.")
@click.option("--out", "out", type=click.Path(path_type=Path), required=True,
              help="Directory to write the cases to (one .json per case).")
@click.option("--fidelity", type=float, default=1.0, show_default=True,
              help="How faithfully the runs are recorded: 1.0 exactly; below, with chance "
                   "1 - F, citations dropped or spurious, wrong sufficiency flags, uncited "
                   "influence and fault echoes (docs/benchmark.md).")
@click.option("--answerable", type=float, default=0.0, show_default=True,
              help="Share of sessions whose final question can fall back to the conversation "
                   "when memory lacks the answer (the paper's regime; docs/benchmark.md).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Only N cases, stratified by domain, fault type and single/multi-fault.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
def generate(seed: int, out: Path, fidelity: float, answerable: float, limit: int | None,
             as_json: bool) -> None:
    """Generate the 150 controlled cases (Table 1's distribution) by running the agent."""
    from provrepair.benchmark.generate import MANIFEST, generate_benchmark
    from provrepair.benchmark.summary import table

    with ProgressBar(quiet=as_json) as bar:
        summary = generate_benchmark(seed, out, limit=limit, fidelity=fidelity,
                                     answerable=answerable, progress=bar)
    if as_json:
        emit_json({k: v for k, v in summary.items() if k != "files"} | {"out": str(out)})
        return
    click.echo(table(summary))
    click.echo(f"\nWrote {summary['cases']} cases and {MANIFEST} to {out}")


@bench.command()
@click.option("--cases", "cases", type=click.Path(path_type=Path, exists=True), required=True,
              help="Directory of case files (from `bench generate`).")
@click.option("--methods", default="all", show_default=True,
              help="Comma-separated method names, or all.")
@click.option("--reasoner", type=click.Choice(["offline", "openai"]), default="offline",
              show_default=True)
@click.option("--model", default=None, help="Model for --reasoner openai.")
@click.option("--out", "out", type=click.Path(path_type=Path), required=True,
              help="Results directory (JSON lines, tables, plot); a rerun resumes.")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Only N cases, stratified by domain, fault type and single/multi-fault.")
@click.option("--replay-noise", type=float, default=0.0, show_default=True,
              help="Chance that the reasoner disagrees when it regenerates a step at repair "
                   "time (a paraphrase, a wrong value or an omitted fact; docs/benchmark.md).")
@click.option("--noise-seed", type=int, default=42, show_default=True,
              help="Seed of the replay-noise draws.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes running the pairs of each method (default: one per CPU); "
                   "the results are the same for any number.")
@click.option("--json", "as_json", is_flag=True, help="Print the aggregate metrics as JSON.")
def run(cases: Path, methods: str, reasoner: str, model: str | None, out: Path,
        limit: int | None, replay_noise: float, noise_seed: int, jobs: int | None,
        as_json: bool) -> None:
    """Run methods over the cases and write the paper's tables and plot."""
    from provrepair.benchmark.run import run_benchmark
    from provrepair.benchmark.workers import default_jobs

    with ProgressBar(quiet=as_json) as bar:
        summary, text = run_benchmark(cases, methods, reasoner, model, out, limit=limit,
                                      replay_noise=replay_noise, noise_seed=noise_seed,
                                      jobs=jobs or default_jobs(), progress=bar)
    if as_json:
        emit_json(summary)
    else:
        click.echo(text)


@bench.command()
@click.option("--levels", default="1.0,0.8,0.6", show_default=True,
              help="Comma-separated provenance fidelity levels.")
@click.option("--seeds", default="42,7,1234", show_default=True,
              help="Comma-separated random seeds: every table gives the mean ± sd over them.")
@click.option("--replay-noise", "noise", default="0,0.05", show_default=True,
              help="Comma-separated replay-noise rates (per-step disagreement of the reasoner "
                   "at repair time), one table each.")
@click.option("--answerable", type=float, default=0.5, show_default=True,
              help="Share of sessions whose final question can fall back to the conversation.")
@click.option("--methods", default="all", show_default=True,
              help="Comma-separated method names, or all.")
@click.option("--out", "out", type=click.Path(path_type=Path), required=True,
              help="Directory for the cases and results of every seed and level, the tables "
                   "and the plots; a rerun reuses and resumes them.")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Only N cases per level and seed, stratified (a smoke run).")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes running the pairs of each method (default: one per CPU); "
                   "the results are the same for any number.")
@click.option("--json", "as_json", is_flag=True, help="Print the sweep as JSON.")
def sweep(levels: str, seeds: str, noise: str, answerable: float, methods: str, out: Path,
          limit: int | None, jobs: int | None, as_json: bool) -> None:
    """Every method over fidelity levels, replay-noise rates and seeds: recovery, recurrence,
    benign preservation, claim F1 and replay ratio, mean ± sd over the seeds (sweep.md,
    sweep.csv, sweep.json, quality_vs_fidelity-noise-R.png). Offline."""
    from provrepair.benchmark.sweep import Grid, run_sweep
    from provrepair.benchmark.workers import default_jobs

    grid = Grid(tuple(_numbers(levels, "--levels", float)), tuple(_numbers(seeds, "--seeds", int)),
                tuple(_numbers(noise, "--replay-noise", float)))
    with ProgressBar(quiet=as_json) as bar:
        result, text = run_sweep(grid, methods, out, limit=limit, answerable=answerable,
                                 jobs=jobs or default_jobs(), progress=bar)
    if as_json:
        emit_json(result)
    else:
        click.echo(text)


def _numbers(text: str, option: str, kind: type[float] | type[int]) -> list[Any]:
    from provrepair.provenance.errors import InputError

    try:
        return [kind(v) for v in text.split(",") if v.strip()]
    except ValueError as exc:
        raise InputError(f"{option} {text!r}: not a list of numbers") from exc


@bench.command()
@click.option("--json", "as_json", is_flag=True, help="Print what was removed as JSON.")
def clean(as_json: bool) -> None:
    """Remove what benchmark runs left in the configured store: the provrepair_bench_*
    graphs on FalkorDB, the <task>::<method> tasks on Neo4j. Your own tasks stay."""
    from provrepair.benchmark.clean import clean_benchmarks
    from provrepair.provenance.store.config import open_store

    with open_store() as store:
        removed = clean_benchmarks(store)
    if as_json:
        emit_json(removed)
        return
    names = removed.get("graphs", removed.get("tasks", []))
    kind = "graphs" if "graphs" in removed else "tasks"
    click.echo(f"removed {len(names)} benchmark {kind}" + "".join(f"\n  {n}" for n in names))
    for busy in removed.get("busy", []):
        what = busy.get("graph") or "the benchmark tasks"
        click.echo(f"kept {what}: a benchmark run is using it ({busy['holder']}, pid "
                   f"{busy['pid']} on {busy['host']}); run `bench clean` again after it ends")
