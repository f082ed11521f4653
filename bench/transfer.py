"""The transfer set: rebuild its cases from τ²-bench's published retail runs, or run every
method of the paper's Table 3 on the committed cases (mean ± sd over seeds).

    python bench/transfer.py build --source GIT_DIR [--out DIR] [--check]
    python bench/transfer.py build --source-file ROWS.jsonl [--out DIR] [--check]
    python bench/transfer.py run [--out DIR] [--methods a,b] [--seeds 42,7,1234]
                                 [--replay-noise 0.05] [--jobs N] [--limit N]
                                 [--reasoner offline|openai] [--model M]

`build` reads the source file at its pinned commit from a fetched copy of
sierra-research/tau2-bench (a git directory, no work tree needed; `--source-file`: the file
itself) and writes the cases and manifest (default: the committed directory
benchmark/transfer/cases); `--check` writes them to a temporary directory instead and says
whether every case it built equals the committed one (with the committed set's settings and
each case's committed fault count; the manifest too when the whole source was given). No
network is used.

`run` works in the configured store like `provrepair bench run` (PROVREPAIR_HOME's embedded
server, or PROVREPAIR_URI), in the benchmark's own graphs; results go to `--out` (default: a
new temporary directory, printed). Prints the Table 3 form, the machine and the command.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from provrepair.benchmark.transfer.build import (
    CASES_DIR,
    Settings,
    build_transfer,
    committed_counts,
    read_manifest,
    write_transfer,
)
from provrepair.benchmark.transfer.run import NOISE, run_transfer
from provrepair.benchmark.transfer.tau2 import read_rows, rows_from_git
from provrepair.benchmark.workers import default_jobs
from provrepair.provenance.errors import ProvrepairError


def build(args: argparse.Namespace) -> int:
    rows = read_rows(Path(args.source_file)) if args.source_file else rows_from_git(Path(args.source))
    committed = Path(args.out)
    if not args.check:
        cases, summary = build_transfer(rows, Settings(seed=args.seed))
        write_transfer(cases, summary, committed)
        print(f"{len(cases)} cases, poisoned records per case {summary['fault_multiplicity']} "
              f"→ {committed}")
        return 0
    # like with like: the committed set's settings, and each case's committed fault count
    # (a part of the source rebuilds the cases it holds as the whole set made them)
    manifest = read_manifest(committed)
    settings = Settings(manifest["seed"], manifest["fidelity"], manifest["answerable_share"])
    cases, summary = build_transfer(rows, settings, counts=committed_counts(manifest))
    names = [f"{c.task_id}.json" for c in cases]
    whole = sorted(names) == sorted(p.name for p in committed.glob("tau2_retail_*.json"))
    with tempfile.TemporaryDirectory(prefix="transfer-check-") as tmp:
        write_transfer(cases, summary, Path(tmp))
        _, differ, missing = filecmp.cmpfiles(tmp, committed,
                                              [*names, *(["manifest.json"] if whole else [])],
                                              shallow=False)
    if differ or missing:
        print(f"differ from {committed}: {differ + missing}")
        return 1
    print(f"identical: {len(names)} case files" + (" and the manifest" if whole else "")
          + f" equal to {committed}")
    return 0


class Phases:
    """Progress on stderr: one line per finished phase (a method at a seed) and every note."""

    def __init__(self) -> None:
        self.label, self.total, self.done = "", 0, 0

    def start(self, label: str, total: int) -> None:
        self.label, self.total, self.done = " ".join(label.split()), total, 0

    def advance(self, n: int = 1, item: str | None = None) -> None:
        self.done += n

    def note(self, text: str) -> None:
        print(text, file=sys.stderr)

    def finish(self) -> None:
        print(f"{self.label}: {self.done}/{self.total} pairs", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="transfer-run-"))
    seeds = tuple(int(s) for s in args.seeds.split(",") if s.strip())
    started = time.perf_counter()
    _, text = run_transfer(args.methods, seeds, out, replay_noise=args.replay_noise,
                           reasoner=args.reasoner, model=args.model, jobs=args.jobs,
                           limit=args.limit, progress=Phases())
    print(text)
    print(f"results: {out}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.python_version()}; "
          f"{time.perf_counter() - started:.0f} s; command: python bench/transfer.py "
          + " ".join(sys.argv[1:]))
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("build", help="rebuild the cases from the source")
    source = make.add_mutually_exclusive_group(required=True)
    source.add_argument("--source", help="a fetched sierra-research/tau2-bench (git directory)")
    source.add_argument("--source-file", help="the source file itself (JSON lines)")
    make.add_argument("--out", default=str(CASES_DIR))
    make.add_argument("--seed", type=int, default=Settings().seed)
    make.add_argument("--check", action="store_true",
                      help="build into a temporary directory and compare with --out")
    go = commands.add_parser("run", help="run the methods on the committed cases")
    go.add_argument("--out")
    go.add_argument("--methods", default=None, help="default: the paper's Table 3 methods")
    go.add_argument("--seeds", default="42,7,1234")
    go.add_argument("--replay-noise", type=float, default=NOISE)
    go.add_argument("--jobs", type=int, default=default_jobs())
    go.add_argument("--limit", type=int, default=None)
    go.add_argument("--reasoner", default="offline", choices=["offline", "openai"],
                    help="openai: an OpenAI-compatible endpoint (OPENAI_API_KEY, OPENAI_BASE_URL); "
                    "LLM-judge runs only with it")
    go.add_argument("--model", default=None)
    args = parser.parse_args()
    try:
        sys.exit(build(args) if args.command == "build" else run(args))
    except ProvrepairError as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
