"""Neo4j 5 through the official driver: each statement one transaction, the database always named.

A statement that meets a transient error or a lost connection is run again (the statements
are idempotent, so a retry duplicates nothing) until PROVREPAIR_CONNECT_TIMEOUT has passed
since it was first sent: a server dying mid-command is reported within that time, not after
the driver's own 30 s of retries per statement. A lost connection while a write was
committing is not retried: its outcome is unknown (OutcomeUnknown, provenance/errors.py).
On a cluster (`neo4j://`) each statement goes where its registry mode says: `mode: read`
to a follower (READ routing), writes to the leader; one bookmark manager (the driver's
execute_query one) carries every write's bookmark to the reads after it, so a read never
misses a write made before it by the same store (README, "Running on a Neo4j cluster").
The vault (evaluation-only data) lives in PROVREPAIR_VAULT_DATABASE when set, else in the
same database under its own label, which no planner query matches.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import neo4j

from provrepair.provenance.errors import AccessDenied, ProvrepairError, StoreError, map_driver_error
from provrepair.provenance.store.base import GraphStore, Row, plain
from provrepair.provenance.store.queries import Query, QueryRegistry

RETRY_DELAY = 0.2  # seconds before the first retry of a statement, doubling after each


class Neo4jStore(GraphStore):
    engine = "neo4j"

    def __init__(self, uri: str, user: str, password: str, *, database: str = "neo4j",
                 vault_database: str | None = None, registry: QueryRegistry | None = None,
                 connect_timeout: float = 10.0):
        super().__init__(registry)
        self.uri = uri
        self._databases = {"graph": database, "vault": vault_database or database}
        self._retry_time = connect_timeout
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
        database = self._databases[query.target]
        write = query.mode != "read"
        deadline, delay = time.monotonic() + self._retry_time, RETRY_DELAY
        while True:
            try:
                return self._transaction(query.text, dict(params), database, write)
            except ProvrepairError:
                raise
            except Exception as exc:
                retryable = (isinstance(exc, (neo4j.exceptions.DriverError, neo4j.exceptions.Neo4jError))
                             and exc.is_retryable())  # IncompleteCommit is not
                if not retryable or time.monotonic() + delay > deadline:
                    raise map_driver_error(exc, query.path, database, write=write) from exc
            time.sleep(delay)  # back-off before the next attempt, not a wait for a condition
            delay *= 2

    def _transaction(self, text: str, params: dict[str, Any], database: str,
                     write: bool) -> list[Row]:
        """One attempt: the statement in a transaction of its own, routed by its mode, its
        bookmark kept for the reads after it."""
        mode = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        with self._driver.session(database=database, default_access_mode=mode,
                                  bookmark_manager=self._bookmarks) as session, \
                session.begin_transaction() as tx:
            rows = [plain(record.data()) for record in tx.run(text, params)]
            tx.commit()
        return rows

    def ensure_schema(self) -> None:
        for query in self.registry.schema[self.engine]:
            self._execute(query, {})

    def identity(self) -> tuple[Any, ...]:
        """The database itself: Neo4j's id of it (db.info), the same from every member of a
        cluster and under every address; a server without db.info (ArcadeDB) is known by its
        addresses as resolved (a name and an IP of one host are equal), port and database."""
        try:
            rows = self.run("get_database_id")
        except (StoreError, AccessDenied):  # no such procedure here, or not for this user
            rows = []
        if rows and rows[0].get("id"):
            return ("neo4j", rows[0]["id"])
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
