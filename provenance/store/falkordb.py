"""FalkorDB through its native client (Redis protocol), never its Bolt endpoint.

Why not Bolt: over Bolt, FalkorDB crashed on parameters above ~4 KB, hung clients after a
connection closed and lost every error text (docs/engines.md). The native client
sends parameters in a `CYPHER k=v ...` header: strings are double-quoted with `\\` and `"`
escaped, and the server's parser reads no other escape, so a value can never end the
literal early (tests/integration/test_injection.py proves it with hostile values). NUL is
the one character that cannot travel this way; provenance.validate rejects it up front.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from falkordb import FalkorDB

from provrepair.provenance.errors import ProvrepairError, map_driver_error
from provrepair.provenance.store.base import GraphStore, Row, plain
from provrepair.provenance.store.queries import Query, QueryRegistry

SCALARS = frozenset({str, int, float, bool, type(None)})
GRAPH = "provrepair"
VAULT_GRAPH = "provrepair_vault"  # evaluation-only data, never read by repair


class FalkorDBStore(GraphStore):
    engine = "falkordb"

    def __init__(self, host: str, port: int, password: str | None, *, graph: str = GRAPH,
                 vault_graph: str = VAULT_GRAPH, registry: QueryRegistry | None = None,
                 connect_timeout: float = 10.0):
        super().__init__(registry)
        self.host, self.port, self.graph_name = host, port, graph
        self._db = FalkorDB(host=host, port=port, password=password, socket_timeout=600,
                            socket_connect_timeout=connect_timeout)
        self._graphs = {"graph": self._db.select_graph(graph),
                        "vault": self._db.select_graph(vault_graph)}

    def _execute(self, query: Query, params: Mapping[str, Any]) -> list[Row]:
        graph = self._graphs[query.target]
        try:
            if query.mode == "read":
                result = graph.ro_query(query.text, dict(params))
            else:
                result = graph.query(query.text, dict(params))
        except ProvrepairError:
            raise
        except Exception as exc:
            raise map_driver_error(exc, query.path) from exc
        names = [column[1] for column in result.header]
        # Most values are scalars; only maps and lists need converting (measured: converting
        # every value cost 5x building the rows, bench/results/plan.md). The exact-type test
        # comes first: an isinstance check against the Mapping ABC costs ~0.6 µs a value.
        return [{name: v if type(v) in SCALARS else plain(v)
                 for name, v in zip(names, row, strict=True)} for row in result.result_set]

    def ensure_schema(self) -> None:
        for query in self.registry.schema[self.engine]:
            try:
                self._graphs[query.target].query(query.text)
            except Exception as exc:
                # CREATE INDEX is not idempotent on FalkorDB: a second run says so.
                if "already indexed" not in str(exc):
                    raise map_driver_error(exc, query.path) from exc

    def identity(self) -> tuple[Any, ...]:
        """The server's own run id (unique per server process) and the graph."""
        run_id = self._db.connection.info("server").get("run_id")
        return ("falkordb", run_id, self.graph_name)

    def describe(self) -> dict[str, Any]:
        return {"engine": self.engine, "uri": f"falkordb://{self.host}:{self.port}",
                "graph": self.graph_name}

    def graph_names(self) -> list[str]:
        """Every graph of the server (the benchmark's scratch graphs among them)."""
        return [str(name) for name in self._db.list_graphs()]

    def drop_graph(self, name: str) -> None:
        try:
            self._db.select_graph(name).delete()
        except Exception as exc:
            raise map_driver_error(exc, f"GRAPH.DELETE {name}") from exc

    def close(self) -> None:
        self._db.connection.close()
