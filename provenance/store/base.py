"""The adapter interface: the only thing the rest of provrepair knows about a graph store.

    store.run(name, params)   → list of plain dict rows (one statement, atomic)
    store.run_each(statements, done) → write statements in order, each atomic on its own
    store.read_ahead()        → reads sent before their replies are read (`ReadAhead`)

Each statement is atomic on its own (FalkorDB has no multi-statement transactions, so
neither engine is given one) and they run in order: callers therefore make every statement
idempotent and order them so that a crash between any two leaves a
state the next run completes (see provenance.ingest). Parameters are always passed as
parameters; query texts come only from the cypher/ registry.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

from provrepair.provenance.errors import InternalError, ProvrepairError
from provrepair.provenance.store.queries import Query, QueryRegistry, load_registry

Row = dict[str, Any]
Statement = tuple[str, Mapping[str, Any]]
Pending = Callable[[], list[Row]]  # a sent read: called, it returns the statement's rows
T = TypeVar("T")

# Rows per `UNWIND $rows` statement, reads and writes alike: 1k-5k measured fastest on
# FalkorDB (docs/engines.md), and a batch stays far below any protocol limit.
BATCH_ROWS = 2000


def batched(rows: Sequence[T], size: int = BATCH_ROWS) -> Iterator[list[T]]:
    """`rows` in consecutive slices of at most `size`."""
    for start in range(0, len(rows), size):
        yield list(rows[start:start + size])


class GraphStore(ABC):
    """A graph database holding provenance graphs; one subclass per engine."""

    engine: str = ""

    def __init__(self, registry: QueryRegistry | None = None):
        self.registry = registry or load_registry()

    def run(self, name: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        """Run the named query with parameters; return its rows as plain dicts."""
        query = self._checked(name, params or {})
        return self._execute(query, params or {})

    def run_each(self, statements: Iterable[Statement],
                 done: Callable[[Mapping[str, Any]], None] | None = None) -> None:
        """Run write statements in order, each atomic on its own, their rows dropped (bulk
        writes: ingest batches); `done(params)` after each. `statements` may be lazy: an
        adapter can build the next while the server runs the current one."""
        for name, params in statements:
            self.run(name, params)
            if done is not None:
                done(params)

    def read_ahead(self) -> AbstractContextManager[ReadAhead]:
        """Reads sent ahead of their replies, for one caller's unit of work (a plan). Here
        each runs when sent; an adapter whose protocol allows it sends the statement and
        returns, so the server runs it while the caller works (FalkorDB: falkordb.py)."""
        return nullcontext(ReadAhead(self))

    def _checked(self, name: str, params: Mapping[str, Any]) -> Query:
        query = self.registry[name]
        if set(params) != query.params:
            raise InternalError(
                f"{query.path}: called with params {sorted(params)}, declares {sorted(query.params)}")
        return query

    @abstractmethod
    def _execute(self, query: Query, params: Mapping[str, Any]) -> list[Row]: ...

    def prepare_for_writes(self) -> None:  # noqa: B027 - optional hook
        """Called before a task is written (ingest, the Recorder). Neo4j: nothing (its schema
        is an administrator's `provrepair db migrate`); FalkorDB: see falkordb.py."""

    @abstractmethod
    def ensure_schema(self) -> None:
        """Create the indexes/constraints of cypher/schema/<engine>/ if missing."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """Where this store is (URI without credentials), for status output."""

    def identity(self) -> tuple[Any, ...]:
        """What makes two connections the same graph, however they were addressed
        (`localhost` or `127.0.0.1`): export refuses to copy a task onto itself."""
        return tuple(sorted(self.describe().items()))

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ReadAhead:
    """`send(name, params)` → a `Pending` whose call returns the rows. Replies are read in
    the order sent; a statement's error is raised by its own call, on every engine, so a
    caller's handler around that call sees it (here the statement runs at `send`, and the
    error it met is kept for the call, as FalkorDB's pipelined reply is read there)."""

    def __init__(self, store: GraphStore):
        self.store = store

    def send(self, name: str, params: Mapping[str, Any]) -> Pending:
        self.store._checked(name, params)  # our own bug (a wrong call): raised where made
        try:
            rows = self.store.run(name, params)
        except ProvrepairError as exc:
            failed = exc

            def reraise() -> list[Row]:
                raise failed
            return reraise
        return lambda: rows


def plain(value: Any) -> Any:
    """Engine result values → plain Python (OrderedDict → dict, recursively)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
