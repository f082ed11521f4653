"""`provrepair bench generate|run|sweep|report|clean`: the paper's benchmarks, offline.

`--set` names the case set: `controlled` (the paper's controlled benchmark, generated here,
benchmark/generate.py) or `transfer` (the paper's §4.4 transfer set of multi-fault cases built
from public agent trajectories, benchmark/transfer/). A set is a module with what
benchmark/sweep.py `CaseSet` names: SET_NAME, case_count(seed, limit) and
generate_benchmark(seed, out, *, limit, fidelity, answerable, progress, tag) writing case
files and a manifest.json, and optionally summary_table(manifest) -> str for `generate` to
print (the controlled set's is benchmark/summary.py `table`), DEFAULTS for the options a
user leaves out (`set_default`) and paper_tables(sweep, outcomes) for `sweep`; `run` reads
any case files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from provrepair.commands.output import ProgressBar, emit_json

# --set NAME → the module building that case set ("module" under provrepair.benchmark)
CASE_SETS = {"controlled": "generate", "transfer": "transfer"}
SET_OPTION = click.option(
    "--set", "case_set", type=click.Choice(list(CASE_SETS)), default="controlled",
    show_default=True, help="The case set: the paper's controlled benchmark, or its transfer "
    "set of multi-fault cases from public agent trajectories (docs/benchmark.md).")


def case_set_module(name: str) -> Any:
    """The module that builds case set `name` (InputError when it is not installed)."""
    import importlib

    from provrepair.provenance.errors import InputError

    try:
        return importlib.import_module(f"provrepair.benchmark.{CASE_SETS[name]}")
    except ModuleNotFoundError as exc:
        raise InputError(f"--set {name}: this installation has no {name} case set "
                         f"(provrepair.benchmark.{CASE_SETS[name]})") from exc


# the controlled set's defaults; a set's DEFAULTS may name its own (the transfer set: its
# committed cases' recording, one level)
DEFAULTS: dict[str, Any] = {"fidelity": 1.0, "answerable": 0.0, "levels": "1.0,0.8,0.6"}


def set_default(module: Any, option: str, given: Any) -> Any:
    """`given`, or the case set's default for an option the user left out."""
    if given is not None:
        return given
    return getattr(module, "DEFAULTS", {}).get(option, DEFAULTS[option])


@click.group()
def bench() -> None:
    """Generate the paper's benchmarks and run every method on them (the paper's tables)."""


@bench.command()
@SET_OPTION
@click.option("--seed", type=int, default=42, show_default=True, help="Random seed.")
@click.option("--out", "out", type=click.Path(path_type=Path), required=True,
              help="Directory to write the cases to (one .json per case).")
@click.option("--fidelity", type=float, default=None,
              help="How faithfully the runs are recorded: 1.0 exactly; below, with chance "
                   "1 - F, citations dropped or spurious, wrong sufficiency flags, uncited "
                   "influence and fault echoes (docs/benchmark.md). Default 1.0; --set "
                   "transfer: 0.8, its committed cases'.")
@click.option("--answerable", type=float, default=None,
              help="Share of sessions whose final question can fall back to the conversation "
                   "when memory lacks the answer (the paper's regime; docs/benchmark.md). "
                   "Default 0.0; --set transfer: 0.5, its committed cases'.")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Only N cases, stratified by domain, fault type and single/multi-fault "
                   "(--set transfer: by the number of poisoned records).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
def generate(case_set: str, seed: int, out: Path, fidelity: float | None,
             answerable: float | None, limit: int | None, as_json: bool) -> None:
    """Generate a case set: the 150 controlled cases (Table 1's distribution) by running the
    agent, or the 50 transfer cases from their committed source lines."""
    from provrepair.benchmark.generate import MANIFEST
    from provrepair.benchmark.summary import table

    module = case_set_module(case_set)
    with ProgressBar(quiet=as_json) as bar:
        summary = module.generate_benchmark(
            seed, out, limit=limit, fidelity=set_default(module, "fidelity", fidelity),
            answerable=set_default(module, "answerable", answerable), progress=bar)
    if as_json:
        emit_json({k: v for k, v in summary.items() if k != "files"} | {"out": str(out)})
        return
    click.echo(getattr(module, "summary_table", table)(summary))  # a set may print its own
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
@click.option("--levels", default=None,
              help="Comma-separated provenance fidelity levels. Default 1.0,0.8,0.6; --set "
                   "transfer: 0.8 (the paper's Table 3 setting, its committed cases').")
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
@SET_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the sweep as JSON.")
def sweep(levels: str | None, seeds: str, noise: str, answerable: float, methods: str, out: Path,
          limit: int | None, jobs: int | None, case_set: str, as_json: bool) -> None:
    """Every method over fidelity levels, replay-noise rates and seeds: recovery, recurrence,
    benign preservation, claim F1 and replay ratio, mean ± sd over the seeds (sweep.md,
    sweep.csv, sweep.json, quality_vs_fidelity-noise-R.png), beside the paper's table (the
    transfer set: Table 3's form), then `bench report`. Offline."""
    from provrepair.benchmark.sweep import Grid, run_sweep
    from provrepair.benchmark.workers import default_jobs

    module = case_set_module(case_set)
    grid = Grid(tuple(_numbers(set_default(module, "levels", levels), "--levels", float)),
                tuple(_numbers(seeds, "--seeds", int)),
                tuple(_numbers(noise, "--replay-noise", float)))
    with ProgressBar(quiet=as_json) as bar:
        result, text = run_sweep(grid, methods, out, limit=limit, answerable=answerable,
                                 jobs=jobs or default_jobs(), progress=bar, case_set=module)
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
@click.option("--out", "out", type=click.Path(path_type=Path, exists=True, file_okay=False),
              required=True, help="A `bench sweep` output directory.")
@click.option("--quote-into", "quote_into", type=click.Path(path_type=Path, exists=True,
                                                            dir_okay=False),
              help="Then rewrite every `<!-- quote: PATH -->` block of this Markdown file "
                   "(BENCHMARKS.md) with the file at PATH.")
@click.option("--json", "as_json", is_flag=True, help="Print the readings as JSON.")
def report(out: Path, quote_into: Path | None, as_json: bool) -> None:
    """Write a sweep's readings from its result files: outcomes.json (which cases each method
    recovered), readings.json, comparisons.md and headline.md (each comparison with N, mean ±
    sd, the cases that differ and a sign test's verdict). `bench sweep` writes them at its
    end. It reads each run's results.jsonl, which a committed sweep folder does not keep:
    without them it refuses and writes nothing."""
    from provrepair.benchmark.report import COMPARISONS, requote, write_report

    result = write_report(out)
    if quote_into is not None:
        requote(quote_into)
    if as_json:
        emit_json(result)
    else:
        click.echo((out / COMPARISONS).read_text(encoding="utf-8"), nl=False)


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
