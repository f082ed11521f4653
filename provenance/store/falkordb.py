"""FalkorDB through its native client (Redis protocol), never its Bolt endpoint.

Why not Bolt: over Bolt, FalkorDB crashed on parameters above ~4 KB, hung clients after a
connection closed and lost every error text (docs/engines.md). The native client
sends parameters in a `CYPHER k=v ...` header: strings are double-quoted with `\\` and `"`
escaped, and the server's parser reads no other escape, so a value can never end the
literal early (tests/integration/test_injection.py proves it with hostile values). NUL is
the one character that cannot travel this way; provenance.validate rejects it up front.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from falkordb import FalkorDB

from provrepair.provenance.errors import ProvrepairError, StoreUnavailable, map_driver_error
from provrepair.provenance.store.base import GraphStore, Pending, ReadAhead, Row, Statement
from provrepair.provenance.store.falkordb_wire import check_reply, params_header, rows
from provrepair.provenance.store.queries import Query, QueryRegistry

GRAPH = "provrepair"
VAULT_GRAPH = "provrepair_vault"  # evaluation-only data, never read by repair
# How long one statement may run: a large ingest batch or swap legitimately takes minutes,
# so this is not the connect timeout; a server that never answers is caught by _handshake.
OPERATION_TIMEOUT_S = 600.0


def _handshake(host: str, port: int, password: str | None, timeout: float) -> None:
    """Connect, authenticate and PING within `timeout` (PROVREPAIR_CONNECT_TIMEOUT): a port
    that accepts and never answers fails here in seconds, not after the operation timeout."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    # no retries: each would wait the timeout again (a 1 s timeout took 15 s with them)
    client = redis.Redis(host=host, port=port, password=password, socket_timeout=timeout,
                         socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 0))
    try:
        client.ping()
    except redis.exceptions.TimeoutError as exc:
        raise StoreUnavailable(
            f"falkordb://{host}:{port} accepted the connection but did not answer within "
            f"{timeout:g} s (PROVREPAIR_CONNECT_TIMEOUT)") from exc
    except redis.exceptions.BusyLoadingError as exc:
        raise StoreUnavailable(f"falkordb://{host}:{port} is loading its data; try again "
                               "when it has finished") from exc
    except Exception as exc:  # refused, reset, wrong password: one line (errors.py)
        raise map_driver_error(exc, f"connect to falkordb://{host}:{port}") from exc
    finally:
        client.close()


def absent_graph(query: Query, exc: Exception) -> bool:
    """A read of a graph nothing has written yet (no schema either: `db migrate` makes the
    graph): FalkorDB refuses it ("empty key"); it is an empty graph, so the read has no rows."""
    return query.mode == "read" and "empty key" in str(exc)


@contextmanager
def driver_errors(query: Query | str) -> Iterator[None]:
    """Client and server errors of one statement (or of what else talks to the server:
    a connection taken from the pool, a server command), mapped to ours, naming the query
    file or what was being done: a server killed mid-statement is one line, never a
    traceback."""
    try:
        yield
    except ProvrepairError:
        raise
    except Exception as exc:
        raise map_driver_error(exc, query if isinstance(query, str) else query.path) from exc


class FalkorDBStore(GraphStore):
    engine = "falkordb"

    def __init__(self, host: str, port: int, password: str | None, *, graph: str = GRAPH,
                 vault_graph: str = VAULT_GRAPH, registry: QueryRegistry | None = None,
                 connect_timeout: float = 10.0, operation_timeout: float = OPERATION_TIMEOUT_S,
                 on_close: Callable[[], object] | None = None):
        super().__init__(registry)
        self.host, self.port, self.graph_name = host, port, graph
        self._on_close = on_close  # e.g. stop the embedded server this store's opener started
        self._schema_ready = False
        _handshake(host, port, password, connect_timeout)
        with driver_errors(f"connect to falkordb://{host}:{port}"):
            self._db = FalkorDB(host=host, port=port, password=password,
                                socket_timeout=operation_timeout,
                                socket_connect_timeout=connect_timeout)
            self._graphs = {"graph": self._db.select_graph(graph),
                            "vault": self._db.select_graph(vault_graph)}

    def _execute(self, query: Query, params: Mapping[str, Any]) -> list[Row]:
        graph = self._graphs[query.target]
        # The same command the client's query()/ro_query() sends; the reply is decoded by
        # falkordb_wire (the client's per-value parse was most of a plan's client time).
        with driver_errors(query):
            try:
                reply = graph.execute_command(*self._command(query, params))
                check_reply(reply)
            except Exception as exc:
                if absent_graph(query, exc):
                    return []
                raise
            return rows(graph, reply)  # decoding may ask the server for label names

    def _command(self, query: Query, params: Mapping[str, Any]) -> tuple[str, ...]:
        command = "GRAPH.RO_QUERY" if query.mode == "read" else "GRAPH.QUERY"
        return (command, self._graphs[query.target].name,
                params_header(params) + query.text, "--compact")

    def run_each(self, statements: Iterable[Statement],
                 done: Callable[[Mapping[str, Any]], None] | None = None) -> None:
        """Statements in order on one connection, each atomic on its own, with the next one
        built and encoded (its rows and parameter text: client CPU) while the server runs
        the one before: the two overlap instead of taking turns (BENCHMARKS.md, "Ingest").
        One statement is in flight at a time, so a failure stops where `run` would."""
        sent: tuple[Query, Mapping[str, Any]] | None = None
        with self._stream() as conn:
            for name, params in statements:
                query = self._checked(name, params)
                command = self._command(query, params)
                if sent is not None:
                    self._finish(conn, *sent, done)
                with driver_errors(query):
                    conn.send_command(*command)
                sent = (query, params)
            if sent is not None:
                self._finish(conn, *sent, done)

    @contextmanager
    def read_ahead(self) -> Iterator[ReadAhead]:
        """Reads pipelined on one connection of the pool (see `PipelinedReads`)."""
        with self._stream() as conn:
            reads = self._pipelined_reads(conn)
            yield reads
            reads.drain()

    @contextmanager
    def _stream(self) -> Iterator[Any]:
        """A pool connection of its own for statements sent ahead of their replies; if the
        caller fails, it is dropped (a reply may still be unread: never hand the socket
        back)."""
        pool = self._db.connection.connection_pool
        with driver_errors("a connection from the pool"):
            conn = pool.get_connection()
        try:
            yield conn
        except BaseException:
            conn.disconnect()
            raise
        finally:
            pool.release(conn)

    def _pipelined_reads(self, conn: Any) -> PipelinedReads:
        return PipelinedReads(self, conn)

    def _finish(self, conn: Any, query: Query, params: Mapping[str, Any],
                done: Callable[[Mapping[str, Any]], None] | None) -> None:
        self._read_reply(conn, query)
        if done is not None:
            done(params)

    @staticmethod
    def _read_reply(conn: Any, query: Query) -> Any:
        """The next raw reply on `conn`, checked for errors (not decoded: run_each reads no
        rows, PipelinedReads decodes them when asked for); None for a read of an absent graph."""
        with driver_errors(query):
            try:
                reply = conn.read_response()
                check_reply(reply)
            except Exception as exc:
                if absent_graph(query, exc):
                    return None
                raise
        return reply

    def prepare_for_writes(self) -> None:
        """A graph written without its indexes is slow past a few thousand nodes (25k nodes
        took minutes, 200k with them 26 s: BENCHMARKS.md, issue 25 soak), and FalkorDB has no
        schema rights to respect: a writer creates the indexes it needs, once per connection.
        Readers never do (a read on an unmigrated graph answers without them)."""
        if not self._schema_ready:
            self.ensure_schema()
            self._schema_ready = True

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
        done, self._on_close = self._on_close, None  # once, however often close() is called
        if done is not None:
            done()


class PipelinedReads(ReadAhead):
    """Read statements written to one connection as they are sent; their replies are read,
    in order, when first asked for. The server runs a statement while the client still
    works on an earlier reply, so the two overlap instead of taking turns (a plan sends the
    support check of each reach hop behind that hop: BENCHMARKS.md, "Planner"). The server
    runs one connection's commands one after another, so a reply never depends on a
    statement sent after it."""

    store: FalkorDBStore

    def __init__(self, store: FalkorDBStore, conn: Any):
        super().__init__(store)
        self.conn = conn
        self.unread: deque[_Reply] = deque()

    def send(self, name: str, params: Mapping[str, Any]) -> Pending:
        query = self.store._checked(name, params)
        with driver_errors(query):
            self.conn.send_command(*self.store._command(query, params))
        reply = _Reply(query)
        self.unread.append(reply)
        return lambda: self._rows(reply)

    def _rows(self, reply: _Reply) -> list[Row]:
        while reply.rows is None and reply.error is None:
            self._read_next()
        if reply.error is not None:
            raise reply.error
        assert reply.rows is not None
        return reply.rows

    def _read_next(self) -> None:
        """Read the oldest unread reply (a statement's error is kept for its caller)."""
        reply = self.unread.popleft()
        graph = self.store._graphs[reply.query.target]
        try:
            raw = self._receive(reply.query)
            with driver_errors(reply.query):
                reply.rows = [] if raw is None else rows(graph, raw)
        except ProvrepairError as exc:
            reply.error = exc

    def _receive(self, query: Query) -> Any:
        """The next raw reply on the connection, checked for errors."""
        return self.store._read_reply(self.conn, query)

    def drain(self) -> None:
        """Read the replies nobody asked for, so the connection goes back in step."""
        while self.unread:
            self._read_next()


class _Reply:
    __slots__ = ("error", "query", "rows")

    def __init__(self, query: Query):
        self.query = query
        self.rows: list[Row] | None = None
        self.error: ProvrepairError | None = None
