"""Instrumentation shared by the benchmark scripts (bench/ingest.py, bench/plan.py)."""

from __future__ import annotations

from typing import Any


class GraphProbe:
    """Wraps a falkordb Graph to hand the server's own execution time to a sink object
    (any object with a `last_server_ms` attribute: the scripts' TimedStore)."""

    def __init__(self, graph: Any, sink: Any):
        self._graph, self._sink = graph, sink

    def query(self, q: str, params: Any = None, **kw: Any) -> Any:
        result = self._graph.query(q, params, **kw)
        self._sink.last_server_ms = result.run_time_ms
        return result

    def ro_query(self, q: str, params: Any = None, **kw: Any) -> Any:
        result = self._graph.ro_query(q, params, **kw)
        self._sink.last_server_ms = result.run_time_ms
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._graph, name)
