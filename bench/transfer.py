"""The transfer set: rebuild its committed source lines and cases from τ²-bench's published
retail runs, or check that they rebuild byte for byte.

    python bench/transfer.py build --source GIT_DIR [--out DIR] [--check]
    python bench/transfer.py build --source-file ROWS.jsonl [--out DIR] [--check]

`build` reads the source file at its pinned commit from a fetched copy of
sierra-research/tau2-bench (a git directory, no work tree needed; `--source-file`: the file
itself, or a part of it) and writes into `--out` (default: the committed directory
benchmark/transfer/cases) the selected source lines with the fields the builder reads
(`source.jsonl`, what `bench generate|sweep --set transfer` builds from), the 50 cases at the
committed settings and the manifest. `--check` writes them to a temporary directory instead
and says whether every file equals the committed one (with the committed set's settings and
each case's committed fault count; the manifest and source.jsonl as wholes when the whole
source was given, else each given source line against its committed copy). No network.

Running the set is `provrepair bench sweep --set transfer` (the paper's Table 3 setting,
every method, three seeds; docs/benchmark.md, "The transfer set").
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
from pathlib import Path
from typing import Any

from provrepair.benchmark.transfer.build import (
    CASES_DIR,
    SOURCE_FILE,
    Settings,
    build_transfer,
    committed_counts,
    read_manifest,
    source_rows,
    write_source,
    write_transfer,
)
from provrepair.benchmark.transfer.tau2 import read_rows, rows_from_git
from provrepair.provenance.errors import ProvrepairError

SOURCE_NAME = SOURCE_FILE.name


def build(args: argparse.Namespace) -> int:
    rows = read_rows(Path(args.source_file)) if args.source_file else rows_from_git(Path(args.source))
    source = source_rows(rows)
    committed = Path(args.out)
    if not args.check:
        write_source(source, committed / SOURCE_NAME)
        cases, summary = build_transfer(source, Settings())
        write_transfer(cases, summary, committed)
        print(f"{len(cases)} cases, poisoned records per case {summary['fault_multiplicity']} "
              f"and their {len(source)} source lines → {committed}")
        return 0
    # like with like: the committed set's settings, and each case's committed fault count
    # (a part of the source rebuilds the cases it holds as the whole set made them)
    manifest = read_manifest(committed)
    settings = Settings(manifest["seed"], manifest["fidelity"], manifest["answerable_share"])
    cases, summary = build_transfer(source, settings, counts=committed_counts(manifest))
    names = [f"{c.task_id}.json" for c in cases]
    whole = sorted(names) == sorted(p.name for p in committed.glob("tau2_retail_*.json"))
    with tempfile.TemporaryDirectory(prefix="transfer-check-") as tmp:
        write_transfer(cases, summary, Path(tmp))
        write_source(source, Path(tmp) / SOURCE_NAME)
        _, differ, missing = filecmp.cmpfiles(
            tmp, committed, [*names, *(["manifest.json", SOURCE_NAME] if whole else [])],
            shallow=False)
    if not whole:
        differ += [f"{SOURCE_NAME}: simulation {r['simulation_id']}" for r in source
                   if r != committed_line(committed / SOURCE_NAME, r["simulation_id"])]
    if differ or missing:
        print(f"differ from {committed}: {differ + missing}")
        return 1
    print(f"identical: {len(names)} case files" + (", the manifest and the source lines" if whole
                                                   else f" and {len(source)} source lines")
          + f" equal to {committed}")
    return 0


def committed_line(path: Path, simulation: str) -> dict[str, Any] | None:
    """The committed source line of a simulation (None: not committed)."""
    if not path.exists():
        return None
    return next((row for row in read_rows(path) if row.get("simulation_id") == simulation), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("build", help="rebuild the source lines and cases from the source")
    source = make.add_mutually_exclusive_group(required=True)
    source.add_argument("--source", help="a fetched sierra-research/tau2-bench (git directory)")
    source.add_argument("--source-file", help="the source file itself (JSON lines)")
    make.add_argument("--out", default=str(CASES_DIR))
    make.add_argument("--check", action="store_true",
                      help="build into a temporary directory and compare with --out")
    args = parser.parse_args()
    try:
        sys.exit(build(args))
    except ProvrepairError as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
