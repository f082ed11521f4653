"""`provrepair bench generate|run`: the controlled benchmark of the paper, offline."""

from __future__ import annotations

import sys
from pathlib import Path

import click


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
    from repair.bench.generate import generate_benchmark

    generate_benchmark(seed, out, as_json=as_json, progress=sys.stderr.isatty() and not as_json)


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
    from repair.bench.run import run_benchmark

    run_benchmark(cases, methods, reasoner, model, out, limit=limit, as_json=as_json,
                  progress=sys.stderr.isatty() and not as_json)
