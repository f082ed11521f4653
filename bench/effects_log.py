"""Every write logged as its effects (EFFECTS_THRESHOLD 0, the embedded server's setting)
against FalkorDB's default (300 µs per change: a faster write is logged as its query text,
run again when the log is loaded), by task size.

    .venv/bin/python bench/effects_log.py [--steps 1000,5000] [--reps 3]

One private embedded server, its threshold set at runtime (GRAPH.CONFIG SET) for each run, the
two settings interleaved rep by rep. A run, in a fresh graph with the log just rewritten
(and not rewritten again during the run): `ingest_case` of a generated case (create), of a
changed copy over it (replace), the log's growth over both, then the server killed (kill -9)
and started again: the time to load that log, and whether every node and edge came back
under the same id. Prints one row per size and setting (medians).
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import redis

from provrepair.benchmark.random_cases import random_case
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.config import open_store
from provrepair.provenance.store.embedded import EmbeddedServer, ServerInfo

SETTINGS = {"effects": 0, "default": 300}  # EFFECTS_THRESHOLD, µs per change
DUMP = ("MATCH (n) OPTIONAL MATCH (n)-[e]->(m) RETURN id(n), properties(n), id(e), type(e), "
        "id(m), properties(e) ORDER BY id(n), id(e)")


def client(server: EmbeddedServer, info: ServerInfo) -> redis.Redis:
    return redis.Redis(host=info.host, port=info.port, password=server.password())


def exited(pid: int) -> bool:
    """Gone, or a zombie (its files, lock and port already released) not yet reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, IndexError):
        return True


def one_run(server: EmbeddedServer, steps: int, threshold: int, graph: str) -> dict[str, Any]:
    case = random_case(7, steps)
    changed = case.model_copy(update={"domain": f"{case.domain} (v2)"})
    info, _ = server.start()
    server.rewrite_log(info)
    admin = client(server, info)
    admin.config_set("auto-aof-rewrite-percentage", 0)  # this run's writes stay in the log
    admin.execute_command("GRAPH.CONFIG", "SET", "EFFECTS_THRESHOLD", threshold)
    log_before = admin.info("persistence")["aof_current_size"]
    os.environ["PROVREPAIR_GRAPH"] = graph
    with open_store(server.home) as store:
        started = time.monotonic()
        ingest_case(store, case)
        create_s = time.monotonic() - started
        started = time.monotonic()
        ingest_case(store, changed, replace=True)
        replace_s = time.monotonic() - started
    before = admin.execute_command("GRAPH.RO_QUERY", graph, DUMP)[1]
    while admin.info("persistence")["aof_buffer_length"]:  # written to the file: kept by a kill
        time.sleep(0.01)
    log_bytes = admin.info("persistence")["aof_current_size"] - log_before
    admin.close()
    os.kill(info.pid, signal.SIGKILL)
    while not exited(info.pid):
        time.sleep(0.01)
    started = time.monotonic()
    info, _ = server.start()
    restart_s = time.monotonic() - started
    after = client(server, info)
    same = after.execute_command("GRAPH.RO_QUERY", graph, DUMP)[1] == before
    after.execute_command("GRAPH.DELETE", graph)
    after.close()
    return {"elements": len(before), "create_s": create_s, "replace_s": replace_s,
            "log_mb": log_bytes / 1e6, "restart_s": restart_s, "same": same}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="1000,5000", help="steps of the generated case")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    print("| steps | rows | log | create s | replace s | log MB written | kill -9 restart s "
          "| same ids |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="provrepair-effects-") as tmp:
        os.environ["PROVREPAIR_HOME"] = tmp
        server = EmbeddedServer(Path(tmp), progress=lambda line: None)
        try:
            for steps in (int(s) for s in args.steps.split(",")):
                runs: dict[str, list[dict[str, Any]]] = {name: [] for name in SETTINGS}
                for rep in range(args.reps):
                    order = list(SETTINGS) if rep % 2 == 0 else list(reversed(SETTINGS))
                    for name in order:
                        runs[name].append(one_run(server, steps, SETTINGS[name],
                                                  f"effects_{steps}_{rep}_{name}"))
                for name, done in runs.items():
                    med = {key: statistics.median(r[key] for r in done)
                           for key in ("create_s", "replace_s", "log_mb", "restart_s")}
                    print(f"| {steps:,} | {done[0]['elements']:,} | {name} "
                          f"| {med['create_s']:.2f} | {med['replace_s']:.2f} "
                          f"| {med['log_mb']:.1f} | {med['restart_s']:.2f} "
                          f"| {all(r['same'] for r in done)} |", flush=True)
        finally:
            server.stop()
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
