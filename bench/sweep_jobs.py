"""`bench sweep --jobs N` against `--jobs 1` on the same grid: wall time of each, the ratio,
and whether every file they write is the same (each pair's measured `seconds` masked).

    python bench/sweep_jobs.py [--jobs 2] [--limit 6] [--seeds 42,7] [--methods all] [--rounds 1]

Runs the console script of this environment (`provrepair` beside this Python) with its own
PROVREPAIR_HOME (a fresh embedded server, stopped at the end), the two settings alternating
(`--rounds` times each), each into a fresh directory: the load of a shared machine falls on
both alike. Prints the machine, the load average before and after, and the command.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SECONDS = re.compile(r'"seconds": [0-9.e-]+')
COST_CELL = re.compile(r"\| [0-9.]+ \|$", re.MULTILINE)


def masked(path: Path) -> str:
    """What a run computes, without what it measures (the pairs' seconds)."""
    text = SECONDS.sub('"seconds": 0', path.read_text(encoding="utf-8"))
    if path.name == "cost.csv":
        return "\n".join(line.rpartition(",")[0] for line in text.splitlines())
    if path.name == "tables.md":
        head, sep, rest = text.partition("### Repair cost breakdown")
        cost, sep2, tail = rest.partition("\n### ")
        return head + sep + COST_CELL.sub("| 0 |", cost) + sep2 + tail
    return text


def same_files(a: Path, b: Path) -> list[str]:
    """The files that differ (or exist on one side only); a run's header names its cases
    directory and the graph named after it, so both runs are compared as if in one place."""
    names = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    names |= {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    differ = []
    for name in sorted(names):
        if name.suffix == ".png":
            continue
        if not (a / name).exists() or not (b / name).exists():
            differ.append(str(name))
            continue
        if unplaced(masked(a / name), a) != unplaced(masked(b / name), b):
            differ.append(str(name))
    return differ


def unplaced(text: str, out: Path) -> str:
    """The text without its run's directory and the graph named after it (run headers)."""
    return re.sub(r"provrepair_bench_[0-9a-f]{12}", "G", text.replace(str(out), "OUT"))


def load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--limit", type=int, default=6)
    parser.add_argument("--seeds", default="42,7")
    parser.add_argument("--levels", default="1.0,0.8,0.6")
    parser.add_argument("--noise", default="0,0.05")
    parser.add_argument("--methods", default="all")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the outputs (else removed)")
    args = parser.parse_args()
    exe = Path(sys.executable).with_name("provrepair")
    work = Path(tempfile.mkdtemp(prefix="sweep-jobs-"))
    env = {**os.environ, "PROVREPAIR_HOME": str(work / "home")}
    env.pop("PROVREPAIR_URI", None)
    grid = ["--levels", args.levels, "--seeds", args.seeds, "--replay-noise", args.noise,
            "--limit", str(args.limit), "--methods", args.methods]
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load before: {load()}")
    print(f"command: provrepair bench sweep {' '.join(grid)} --jobs J --out DIR")
    times: dict[int, list[float]] = {1: [], args.jobs: []}
    outs: dict[int, Path] = {}
    try:
        for round_ in range(args.rounds):
            for jobs in (1, args.jobs):
                out = work / f"out-{jobs}-{round_}"
                started = time.perf_counter()
                subprocess.run([str(exe), "bench", "sweep", *grid, "--jobs", str(jobs),
                                "--out", str(out), "--json"], env=env, check=True,
                               stdout=subprocess.DEVNULL)
                times[jobs].append(time.perf_counter() - started)
                outs[jobs] = out
                print(f"  --jobs {jobs}: {times[jobs][-1]:.1f} s (load {load()})", flush=True)
    finally:
        subprocess.run([str(exe), "db", "stop"], env=env, check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    serial, parallel = min(times[1]), min(times[args.jobs])
    print(f"best of {args.rounds}: --jobs 1 {serial:.1f} s, --jobs {args.jobs} {parallel:.1f} s, "
          f"ratio {serial / parallel:.2f}x; load after: {load()}")
    differ = same_files(outs[1], outs[args.jobs])
    print("files: identical (seconds masked)" if not differ else f"files DIFFER: {differ}")
    if args.keep:
        print(f"(kept in {work})")
    else:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
