"""What the benchmark scripts share: instrumentation (bench/ingest.py, bench/plan.py) and a
throwaway embedded server (bench/trace_scale.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def private_server(tmp: Path) -> Iterator[None]:
    """One throwaway embedded server under `tmp`, used by this process (PROVREPAIR_HOME)."""
    from provrepair.provenance.store.embedded import EmbeddedServer

    home = tmp / "home"
    os.environ["PROVREPAIR_HOME"] = str(home)
    server = EmbeddedServer(home)
    server.start()
    try:
        yield
    finally:
        server.stop()


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

    def execute_command(self, *args: Any) -> Any:
        """The product's own path (provenance/store/falkordb.py sends the command itself)."""
        reply = self._graph.execute_command(*args)
        self._sink.last_server_ms = server_ms(reply)
        return reply

    def __getattr__(self, name: str) -> Any:
        return getattr(self._graph, name)


def server_ms(reply: Any) -> float:
    """The server's own execution time from a compact reply's statistics (0 if absent)."""
    stats = reply[-1] if isinstance(reply, list) and reply else []
    for line in stats if isinstance(stats, list) else []:
        if isinstance(line, str) and "internal execution time" in line:
            return float(line.split(": ")[1].split(" ")[0])
    return 0.0
