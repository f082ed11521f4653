"""`provrepair bench clean`: remove what benchmark runs left in the configured store.

On FalkorDB every run works in its own graphs `provrepair_bench_<hash>` and
`provrepair_bench_<hash>_vault` (benchmark/cases.py), kept so that an interrupted run
resumes; this drops them all (and `bench_<12 hex>` graphs of earlier releases). The user's own
graph is never touched. On Neo4j a run's tasks are `<task>::<method>` in the configured
database: those are deleted, with their runs and evaluation data.

A run holds a lock in its store for as long as it runs (run.RUN_LOCK, the task lock of
provenance/lock.py: a run killed with -9 does not hold it). What a live run uses is kept and
reported under "busy" (who holds it), so `bench clean` beside a run never pulls its store
from under it; the run's own graphs are removed by the next `bench clean` after it ends.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from provrepair.benchmark.cases import GRAPH_PREFIX
from provrepair.benchmark.run import RUN_LOCK
from provrepair.benchmark.store import bench_store
from provrepair.provenance.ingest import delete_task, list_tasks
from provrepair.provenance.lock import is_stale, lock_holder
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.falkordb import FalkorDBStore
from provrepair.repair.methods import method_names

LEGACY = re.compile(r"^bench_[0-9a-f]{12}(_vault)?$")


def is_bench_graph(name: str) -> bool:
    return name.startswith(GRAPH_PREFIX) or LEGACY.match(name) is not None


def is_bench_task(task_id: str, methods: Collection[str] | None = None) -> bool:
    """`<task>::<method>` for a known method (`methods`: the known names, read once)."""
    head, sep, method = task_id.rpartition("::")
    return bool(sep and head and method in (method_names() if methods is None else methods))


def clean_benchmarks(store: GraphStore) -> dict[str, Any]:
    """What was removed: {"graphs": [...]} on FalkorDB, {"tasks": [...]} on Neo4j; with
    "busy": [{"graph"|"tasks", "holder", "pid", "host"}] for what a live run keeps."""
    if isinstance(store, FalkorDBStore):
        graphs = sorted(g for g in store.graph_names() if is_bench_graph(g))
        busy = {g: holder for g in graphs if not g.endswith("_vault")
                if (holder := _live_run(g)) is not None}
        kept = {*busy, *(f"{g}_vault" for g in busy)}
        for graph in graphs:
            if graph not in kept:
                store.drop_graph(graph)
        return {"graphs": [g for g in graphs if g not in kept],
                **({"busy": [{"graph": g, **h} for g, h in busy.items()]} if busy else {})}
    holder = lock_holder(store, RUN_LOCK)
    # one database for every run: nothing is removed under a live one
    if holder is not None and not is_stale(holder):
        return {"tasks": [], "busy": [{"tasks": "all", **_who(holder)}]}
    known = set(method_names())
    tasks = sorted(t["task_id"] for t in list_tasks(store) if is_bench_task(t["task_id"], known))
    for task_id in tasks:
        delete_task(store, task_id)
    return {"tasks": tasks}


def _live_run(graph: str) -> dict[str, Any] | None:
    with bench_store(graph) as store:
        holder = lock_holder(store, RUN_LOCK)
    return None if holder is None or is_stale(holder) else _who(holder)


def _who(holder: dict[str, Any]) -> dict[str, Any]:
    return {"holder": holder["holder"], "pid": holder.get("pid"), "host": holder.get("host")}
