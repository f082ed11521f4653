"""Plan latency over time in one large store: is it steady, or does the server slow down?

    .venv/bin/python bench/plan_steady.py [--nodes 1000000] [--seconds 120] [--region 1000]

Starts a throwaway embedded server, stores bench/plan.py's target task (affected region of
~R nodes), fills the store with filler tasks up to N nodes, waits for background saves, then
times windows of 10 plans every ~3 s and prints each window's p50 and the server's own
execution time per plan, with the wall clock, so that a slow window can be matched against
the server's log (background saves, AOF rewrites) and the host's load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import redis
from plan import GRAPH, Filler, TimedStore, quiesce, target_case  # bench/ (the script's folder)

from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.embedded import EmbeddedServer
from provrepair.repair.plan import compute_plan


def window(store: TimedStore, task_id: str, plans: int = 10) -> tuple[float, float]:
    """(p50 wall ms, p50 server ms) of `plans` plans."""
    walls, servers = [], []
    for _ in range(plans):
        store.log.clear()
        start = time.perf_counter()
        compute_plan(store, task_id)
        walls.append((time.perf_counter() - start) * 1000)
        servers.append(sum(entry[2] for entry in store.log))
    return statistics.median(walls), statistics.median(servers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--region", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="provrepair-plan-steady-") as tmp:
        home = Path(tmp) / "home"
        os.environ["PROVREPAIR_HOME"] = str(home)
        server = EmbeddedServer(home)
        info, _ = server.start()
        try:
            store = TimedStore(info.host, info.port, server.password(), graph=GRAPH,
                               vault_graph=f"{GRAPH}_vault")
            store.ensure_schema()
            case = target_case(args.region)
            ingest_case(store, case)

            def say(msg: str) -> None:
                print(msg, file=sys.stderr, flush=True)

            Filler(store).add(args.nodes, say)
            quiesce(redis.Redis(host=info.host, port=info.port, password=server.password()), say)
            start = time.perf_counter()
            while time.perf_counter() - start < args.seconds:
                wall, srv = window(store, case.task_id)
                print(f"{time.strftime('%H:%M:%S')} t+{time.perf_counter() - start:5.1f} s  "
                      f"plan p50 {wall:6.1f} ms  server {srv:6.1f} ms", flush=True)
                if time.perf_counter() - start >= args.seconds:
                    break  # the same windows; no idle wait after the last one
                time.sleep(3)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
