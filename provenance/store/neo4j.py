"""Neo4j 5 through the official driver: managed transactions, `database_` always passed.

A write unit (`write`) is one managed transaction, retried by the driver on transient
errors; the statements are idempotent anyway, so a retry cannot duplicate anything.
On a cluster (`neo4j://`) each statement goes where its registry mode says: `mode: read`
to a follower (READ routing), writes to the leader; one bookmark manager (the driver's
execute_query one) carries every write's bookmark to the reads after it, so a read never
misses a write made before it by the same store (README, "Running on a Neo4j cluster").
The vault (evaluation-only data) lives in PROVREPAIR_VAULT_DATABASE when set, else in the
same database under its own label, which no planner query matches.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import neo4j

from provrepair.provenance.errors import ProvrepairError, map_driver_error
from provrepair.provenance.store.base import GraphStore, Row, plain
from provrepair.provenance.store.queries import Query, QueryRegistry


class Neo4jStore(GraphStore):
    engine = "neo4j"

    def __init__(self, uri: str, user: str, password: str, *, database: str = "neo4j",
                 vault_database: str | None = None, registry: QueryRegistry | None = None,
                 connect_timeout: float = 10.0):
        super().__init__(registry)
        self.uri = uri
        self._databases = {"graph": database, "vault": vault_database or database}
        try:
            # A bounded connect: an unreachable host fails within connect_timeout, once,
            # instead of the managed-transaction retries (~30 s of warnings) of a first query.
            self._driver = neo4j.GraphDatabase.driver(
                uri, auth=(user, password), connection_timeout=connect_timeout,
                connection_acquisition_timeout=connect_timeout)
            self._driver.verify_connectivity()
        except Exception as exc:  # malformed URI, unreachable, refused credentials
            if hasattr(self, "_driver"):
                self._driver.close()
            raise map_driver_error(exc, f"connect to {uri}") from exc

    @property
    def _bookmarks(self) -> neo4j.BookmarkManager:
        return self._driver.execute_query_bookmark_manager

    def _execute(self, query: Query, params: Mapping[str, Any]) -> list[Row]:
        routing = neo4j.RoutingControl.READ if query.mode == "read" else neo4j.RoutingControl.WRITE
        try:
            records, _, _ = self._driver.execute_query(
                query.text, dict(params), database_=self._databases[query.target],
                routing_=routing)
        except ProvrepairError:
            raise
        except Exception as exc:
            raise map_driver_error(exc, query.path, self._databases[query.target]) from exc
        return [plain(record.data()) for record in records]

    def ensure_schema(self) -> None:
        for query in self.registry.schema[self.engine]:
            self._execute(query, {})

    def identity(self) -> tuple[Any, ...]:
        """The server's addresses as resolved (a name and an IP of one host are equal)."""
        parts = urlsplit(self.uri)
        try:
            addresses = sorted({a[4][0] for a in socket.getaddrinfo(parts.hostname, None)})
        except OSError:
            addresses = [parts.hostname or ""]
        return ("neo4j", tuple(addresses), parts.port or 7687, self._databases["graph"])

    def describe(self) -> dict[str, Any]:
        return {"engine": self.engine, "uri": self.uri, "database": self._databases["graph"]}

    def close(self) -> None:
        self._driver.close()
