"""Restart of the embedded store against reading its data back, by store size (issue 25).

    .venv/bin/python bench/restart.py [--nodes 10000,100000,300000] [--case-steps 5000]

For each size, a private data directory is filled with copies of one generated case (each
under its own task id) through the ingest API, then timed:
  read back    every task read back (`read_case`) from the running server
  clean        `db stop` (rewrites the append-only log compact) + `db start`
  kill -9      the server killed, then `db start` (loads the log as it was: the RDB preamble
               of its last rewrite plus the statements written since)
and the log's size on disk. Prints one row per size.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import tempfile
import time
from pathlib import Path

from provrepair.benchmark.random_cases import random_case
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.models import Case
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.config import compact_after_write, open_store
from provrepair.provenance.store.embedded import EmbeddedServer

CASE_STEPS = 5000


def copies(template: Case, count: int) -> list[Case]:
    raw = template.model_dump(mode="json")
    out = []
    for i in range(count):
        task_id = f"restart_{i}"
        raw["task_id"] = task_id
        for section in ("session", "memory_store", "trace"):
            for record in raw[section]:
                record["task_id"] = task_id
        out.append(Case.model_validate(raw))
    return out


def log_bytes(home: Path) -> int:
    return sum(p.stat().st_size for p in (home / "data").rglob("*") if p.is_file())


def timed_start(server: EmbeddedServer) -> float:
    started = time.monotonic()
    server.start()
    return time.monotonic() - started


def one_size(nodes: int, template: Case) -> str:
    per_case = len(template.session) + len(template.memory_store) + len(template.trace)
    cases = copies(template, max(1, round(nodes / per_case)))
    total = len(cases) * per_case
    with tempfile.TemporaryDirectory(prefix="provrepair-restart-") as tmp:
        home = Path(tmp)
        os.environ["PROVREPAIR_HOME"] = str(home)
        server = EmbeddedServer(home, progress=lambda line: None)
        try:
            with open_store(home) as store:
                started = time.monotonic()
                for case in cases:
                    ingest_case(store, case)
                ingest_s = time.monotonic() - started
            compact_after_write(total)  # what `provrepair ingest` does after a large write
            with open_store(home) as store:
                started = time.monotonic()
                for case in cases:
                    read_case(store, case.task_id)
                read_s = time.monotonic() - started
            killed_log = log_bytes(home)
            info = server.running()
            assert info is not None
            os.kill(info.pid, signal.SIGKILL)
            while Path(f"/proc/{info.pid}").exists():
                time.sleep(0.01)
            kill_s = timed_start(server)
            server.stop()
            clean_log = log_bytes(home)
            clean_s = timed_start(server)
        finally:
            server.stop()
    return (f"| {total:>9,} | {ingest_s:>8.1f} | {read_s:>8.2f} | {clean_s:>6.2f} "
            f"({clean_s / read_s:.2f}×) | {clean_log / 1e6:>6.1f} | {kill_s:>6.2f} "
            f"({kill_s / read_s:.2f}×) | {killed_log / 1e6:>6.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", default="10000,100000,300000")
    parser.add_argument("--case-steps", type=int, default=CASE_STEPS,
                        help="steps of the copied case (tests/integration/test_bench_scripts.py: 50)")
    args = parser.parse_args()
    template = random_case(7, args.case_steps)
    print("| nodes | ingest s | read back s | clean restart s (× read) | log MB | "
          "kill -9 restart s (× read) | log MB |")
    print("|---|---|---|---|---|---|---|")
    for nodes in (int(n) for n in args.nodes.split(",")):
        print(one_size(nodes, template), flush=True)
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
