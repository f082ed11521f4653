"""`provrepair bench clean`: remove what benchmark runs left in the configured store.

On FalkorDB every run works in its own graphs `provrepair_bench_<hash>` and
`provrepair_bench_<hash>_vault` (benchmark/cases.py), kept so that an interrupted run
resumes; this drops them all (and `bench_<12 hex>` graphs of earlier releases). The user's own
graph is never touched. On Neo4j a run's tasks are `<task>::<method>` in the configured
database: those are deleted, with their runs and evaluation data.
"""

from __future__ import annotations

import re
from typing import Any

from provrepair.benchmark.cases import GRAPH_PREFIX
from provrepair.provenance.ingest import delete_task, list_tasks
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.falkordb import FalkorDBStore
from provrepair.repair.methods import METHODS

LEGACY = re.compile(r"^bench_[0-9a-f]{12}(_vault)?$")


def is_bench_graph(name: str) -> bool:
    return name.startswith(GRAPH_PREFIX) or LEGACY.match(name) is not None


def is_bench_task(task_id: str) -> bool:
    head, sep, method = task_id.rpartition("::")
    return bool(sep and head and method in METHODS)


def clean_benchmarks(store: GraphStore) -> dict[str, Any]:
    """What was removed: {"graphs": [...]} on FalkorDB, {"tasks": [...]} on Neo4j."""
    if isinstance(store, FalkorDBStore):
        graphs = sorted(g for g in store.graph_names() if is_bench_graph(g))
        for graph in graphs:
            store.drop_graph(graph)
        return {"graphs": graphs}
    tasks = sorted(t["task_id"] for t in list_tasks(store) if is_bench_task(t["task_id"]))
    for task_id in tasks:
        delete_task(store, task_id)
    return {"tasks": tasks}
