"""CLI start-up time: wall time of short `provrepair` commands, two installs side by side.

    python bench/cli_start.py --before OLD/.venv/bin/provrepair --after .venv/bin/provrepair

Each command runs `--reps` times per install, interleaved (before, after, before, ...) so
machine load hits both alike; the median and the after/before ratio are printed as a
Markdown table. The store commands talk to the embedded store of a throwaway
PROVREPAIR_HOME with the bundled example ingested (started once, stopped at the end).
Runs only the installed console scripts; imports nothing from the repository.

`db stop` is timed apart: each repetition starts a server in a fresh home with each install
and times its `provrepair db stop` (the command waits until the server has exited).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import tempfile
import time

TASK = "shopping_task_014"
COMMANDS = [["--help"], ["tasks"], ["methods"], ["plan", "--task", TASK, "--no-record"],
            ["repair", "--task", TASK, "--dry-run"]]


def timed(exe: str, args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{exe} {' '.join(args)} failed: {done.stderr.strip()[-300:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the older provrepair console script")
    parser.add_argument("--after", required=True, help="the newer provrepair console script")
    parser.add_argument("--example", required=True, help="a case file to ingest first")
    parser.add_argument("--reps", type=int, default=11)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "PROVREPAIR_HOME": home}
        env.pop("PROVREPAIR_URI", None)
        subprocess.run([args.after, "db", "start"], env=env, check=True, capture_output=True)
        try:
            subprocess.run([args.after, "ingest", args.example], env=env, check=True,
                           capture_output=True)
            rows = [measure(args.before, args.after, cmd, env, args.reps) for cmd in COMMANDS]
        finally:
            subprocess.run([args.after, "db", "stop"], env=env, capture_output=True)
    rows.append(measure_stop(args.before, args.after, args.reps))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.2f} at the end; {args.reps} runs each, interleaved\n")
    print("| command | before (median s) | after (median s) | after ÷ before |")
    print("|---|---|---|---|")
    for cmd, before, after in rows:
        print(f"| `provrepair {' '.join(cmd)}` | {before:.2f} | {after:.2f} | {after / before:.2f} |")


def measure(before: str, after: str, cmd: list[str], env: dict[str, str],
            reps: int) -> tuple[list[str], float, float]:
    times: dict[str, list[float]] = {before: [], after: []}
    timed(before, cmd, env)  # warm the file cache for both
    timed(after, cmd, env)
    for _ in range(reps):
        for exe in (before, after):
            times[exe].append(timed(exe, cmd, env))
    return cmd, statistics.median(times[before]), statistics.median(times[after])


def measure_stop(before: str, after: str, reps: int) -> tuple[list[str], float, float]:
    """`db stop` of a server each install started in a home of its own, interleaved."""
    times: dict[str, list[float]] = {before: [], after: []}
    for _ in range(reps):
        for exe in (before, after):
            with tempfile.TemporaryDirectory() as home:
                env = {**os.environ, "PROVREPAIR_HOME": home}
                env.pop("PROVREPAIR_URI", None)
                timed(exe, ["db", "start"], env)
                times[exe].append(timed(exe, ["db", "stop"], env))
    return ["db", "stop"], statistics.median(times[before]), statistics.median(times[after])


if __name__ == "__main__":
    main()
