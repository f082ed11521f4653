"""GRAPH.BULK or CREATE: is a graph-per-task layout worth it for the embedded engine? (issue 14)

    python -m venv /tmp/bulk && /tmp/bulk/bin/pip install 'falkordb-bulk-loader>=1.2,<2'
    .venv/bin/python bench/bulk_layout.py --loader /tmp/bulk/bin/falkordb-bulk-insert \
        [--sizes 100000] [--reps 3] [--out FILE.json]

FalkorDB's `GRAPH.BULK` (driven by its `falkordb-bulk-insert` tool, which is not a
dependency of provrepair: install it apart, as above) can only create a *new* graph key,
so using it means one graph per task. This script measures, on the same case rows
(bench/ingest.py's generator) and a throwaway embedded server, interleaved repetition by
repetition so that machine noise hits all alike:

  product  `ingest_case` into one shared graph (the case validated beforehand): staging
           CREATEs, count check, swap, evaluation vault; what `provrepair ingest` does.
  create   the same rows as raw `UNWIND … CREATE` statements (bench/ingest.py
           `raw_statements`) into a fresh graph whose indexes exist: the engine's own rate.
  bulk     the same rows written as CSV files (timed: the product would have to write them),
           `falkordb-bulk-insert` into a new graph key (a subprocess: its own Python parses
           the CSVs and sends GRAPH.BULK), then the `:Node(uid)` and `:Node(task_key)`
           indexes created after the load (timed apart).

Printed: elements per second of each, and bulk ÷ create, bulk ÷ product. The written
decision is in BENCHMARKS.md ("Bulk load and a graph per task").
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from ingest import make_case, measure_raw_create, raw_statements, staged_labels  # bench/

from provrepair.provenance.edges import derive_edges
from provrepair.provenance.ingest import ingest_case, staged_statements
from provrepair.provenance.models import Case
from provrepair.provenance.store.embedded import EmbeddedServer
from provrepair.provenance.store.falkordb import FalkorDBStore


def csv_value(value: Any) -> str:
    """CSV text of a property value: lists as JSON text (the loader's array syntax differs)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def write_csvs(case: Case, folder: Path) -> list[str]:
    """One CSV per node label set and per relationship type; the loader's arguments."""
    args: list[str] = []
    for name, rows in _grouped(case).items():
        path = folder / f"{name}.csv"
        with path.open("w", newline="", encoding="utf-8") as handle:
            out = csv.writer(handle)
            if name.startswith("create_staged_edges_"):
                out.writerow(["src", "dst", "sufficient"])
                out.writerows([r["src"], r["dst"], csv_value(r.get("sufficient"))] for r in rows)
                args += ["-R", staged_labels(name), str(path)]
            else:
                keys = sorted({k for r in rows for k in r["props"]})
                out.writerow(["uid", *keys])
                out.writerows([r["uid"], *(csv_value(r["props"].get(k)) for k in keys)]
                              for r in rows)
                args += ["-N", staged_labels(name), str(path)]
    return args


def _grouped(case: Case) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for name, rows in staged_statements("~bulk", case, derive_edges(case)):
        groups[name] += rows
    return groups


def server_usec(client: Any, command: str) -> float:
    """Server-side microseconds spent in `command` so far (INFO commandstats)."""
    stats = {k.lower(): v for k, v in client.info("commandstats").items()}
    return float(stats.get(f"cmdstat_{command}", {}).get("usec", 0))


def measure_bulk(loader: str, url: str, graph: Any, case: Case, elements: int,
                 folder: Path) -> dict[str, float]:
    start = time.perf_counter()
    args = write_csvs(case, folder)
    written = time.perf_counter()
    before = server_usec(graph.client.connection, "graph.bulk")
    subprocess.run([loader, "-u", url, *args, graph.name], check=True, capture_output=True)
    loaded = time.perf_counter()
    server = (server_usec(graph.client.connection, "graph.bulk") - before) / 1e6
    graph.query("CREATE INDEX FOR (n:Node) ON (n.uid)")
    graph.query("CREATE INDEX FOR (n:Node) ON (n.task_key)")
    indexed = time.perf_counter()
    count = graph.ro_query("MATCH (n:Node) RETURN count(n)").result_set[0][0]
    count += graph.ro_query("MATCH (:Node)-[r]->(:Node) RETURN count(r)").result_set[0][0]
    assert count == elements, (count, elements)
    return {"csv_s": written - start, "load_s": loaded - written, "index_s": indexed - loaded,
            "total_s": indexed - start, "el_per_s": elements / (indexed - start),
            "server_s": server, "server_el_per_s": elements / server}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loader", default="falkordb-bulk-insert",
                        help="the falkordb-bulk-insert executable")
    parser.add_argument("--sizes", default="100000", help="comma-separated element counts")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"command": " ".join(["bench/bulk_layout.py", *(argv or sys.argv[1:])]),
                               "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                                          f"{platform.python_version()}", "sizes": []}
    with tempfile.TemporaryDirectory(prefix="provrepair-bench-bulk-") as tmp:
        server = EmbeddedServer(Path(tmp) / "home")
        info, _ = server.start()
        url = f"redis://:{server.password()}@{info.host}:{info.port}"
        try:
            for size in (int(s) for s in args.sizes.split(",")):
                results["sizes"].append(bench_size(size, args.reps, info, server, url, args.loader,
                                                   Path(tmp)))
        finally:
            server.stop()
    print(report(results))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


def bench_size(size: int, reps: int, info: Any, server: EmbeddedServer, url: str, loader: str,
               tmp: Path) -> dict[str, Any]:
    raw, _ = make_case(f"bulk-{size}", elements=size)
    case = Case.model_validate(raw)
    elements = sum(len(rows) for _, rows in staged_statements("~n", case, derive_edges(case)))
    runs: dict[str, list[dict[str, float]]] = defaultdict(list)
    for rep in range(reps):
        stores = {side: FalkorDBStore(info.host, info.port, server.password(),
                                      graph=f"bulk_{side}_{size}_{rep}",
                                      vault_graph=f"bulk_{side}_{size}_{rep}_vault")
                  for side in ("product", "create", "bulk")}
        stores["product"].ensure_schema()
        t0 = time.perf_counter()
        ingest_case(stores["product"], case)
        total = time.perf_counter() - t0
        runs["product"].append({"total_s": total, "el_per_s": elements / total})
        client = stores["create"]._graphs["graph"].client.connection
        before = server_usec(client, "graph.query")
        runs["create"].append(measure_raw_create(stores["create"], raw_statements(case),
                                                 elements))
        spent = (server_usec(client, "graph.query") - before) / 1e6
        runs["create"][-1].update(server_s=spent, server_el_per_s=elements / spent)
        folder = tmp / f"csv_{size}_{rep}"
        folder.mkdir()
        graph = stores["bulk"]._graphs["graph"]
        runs["bulk"].append(measure_bulk(loader, url, graph, case, elements, folder))
        for store in stores.values():
            for name in (store.graph_name, f"{store.graph_name}_vault"):
                if name in store.graph_names():
                    store.drop_graph(name)
            store.close()
        print(f"[{time.strftime('%H:%M:%S')}] {size}: rep {rep + 1}/{reps}: " + ", ".join(
            f"{k} {v[-1]['el_per_s']:,.0f} el/s" for k, v in runs.items()), file=sys.stderr)
    return {"elements": elements, "runs": runs,
            "median": {k: {f: statistics.median(r[f] for r in v) for f in v[0]}
                       for k, v in runs.items()}}


def report(results: dict[str, Any]) -> str:
    out = [f"Machine: {results['machine']}. Command: `{results['command']}`", "",
           "| elements | product ingest_case el/s | raw CREATE el/s | bulk el/s (CSV + load "
           "+ indexes) | of which CSV / load / indexes (s) | bulk ÷ CREATE | bulk ÷ product "
           "| server only: CREATE el/s | server only: GRAPH.BULK el/s | server only: bulk ÷ "
           "CREATE |", "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|"]
    for r in results["sizes"]:
        m = r["median"]
        b = m["bulk"]
        out.append(f"| {r['elements']:,} | {m['product']['el_per_s']:,.0f} "
                   f"| {m['create']['el_per_s']:,.0f} | {b['el_per_s']:,.0f} "
                   f"| {b['csv_s']:.2f} / {b['load_s']:.2f} / {b['index_s']:.2f} "
                   f"| ×{b['el_per_s'] / m['create']['el_per_s']:.2f} "
                   f"| ×{b['el_per_s'] / m['product']['el_per_s']:.2f} "
                   f"| {m['create']['server_el_per_s']:,.0f} | {b['server_el_per_s']:,.0f} "
                   f"| ×{b['server_el_per_s'] / m['create']['server_el_per_s']:.2f} |")
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
