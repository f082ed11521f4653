"""`provrepair bench generate|run`: the controlled benchmark of the paper, offline."""

from __future__ import annotations

from pathlib import Path

import click

from provrepair.commands.output import ProgressBar, emit_json


@click.group()
def bench() -> None:
    """Generate the controlled benchmark and run every method on it (the paper's tables)."""


@bench.command()
@click.option("--seed", type=int, default=42, show_default=True, help="Random seed.")
@click.option("--out", "out", type=click.Path(path_type=Path), required=True,
              help="Directory to write the cases to (one .json per case).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
def generate(seed: int, out: Path, as_json: bool) -> None:
    """Generate the 150 controlled cases (Table 1's distribution) by running the agent."""
    from provrepair.repair.bench.generate import MANIFEST, generate_benchmark
    from provrepair.repair.bench.summary import table

    with ProgressBar(quiet=as_json) as bar:
        summary = generate_benchmark(seed, out, progress=bar)
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
@click.option("--limit", type=int, default=None, help="Only the first N cases (a smoke run).")
@click.option("--json", "as_json", is_flag=True, help="Print the aggregate metrics as JSON.")
def run(cases: Path, methods: str, reasoner: str, model: str | None, out: Path,
        limit: int | None, as_json: bool) -> None:
    """Run methods over the cases and write the paper's tables and plot."""
    from provrepair.repair.bench.run import run_benchmark

    with ProgressBar(quiet=as_json) as bar:
        summary, text = run_benchmark(cases, methods, reasoner, model, out, limit=limit,
                                      progress=bar)
    if as_json:
        emit_json(summary)
    else:
        click.echo(text)
