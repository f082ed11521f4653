"""The store a benchmark run writes to: the configured one, on FalkorDB in the run's own graph
(run.py's docstring says why; `bench clean` drops those graphs)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.config import open_store


@contextmanager
def bench_store(graph: str) -> Iterator[GraphStore]:
    """The configured store, on FalkorDB in the graph `graph` instead of PROVREPAIR_GRAPH."""
    saved = os.environ.get("PROVREPAIR_GRAPH")
    os.environ["PROVREPAIR_GRAPH"] = graph
    try:
        store = open_store(migrate=True)  # a scratch graph of its own: its schema first
    finally:
        if saved is None:
            os.environ.pop("PROVREPAIR_GRAPH", None)
        else:
            os.environ["PROVREPAIR_GRAPH"] = saved
    try:
        yield store
    finally:
        store.close()
