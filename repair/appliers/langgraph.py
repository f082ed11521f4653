"""LangGraph's long-term memory (`langgraph.store.base.BaseStore`): records are items
`(namespace, key=agent's memory id, value={value_key: content, ...})`; the other fields of a
value are kept. A record's content is the text under `value_key`, or, when the agent stores a
structure there (langmem's memory manager stores `{"kind", "content": {...}}`), its JSON with
sorted keys (`value_text`: what provrepair.integrations records too); a patch writing JSON back
into such a field writes the structure. Quarantine moves an item to the namespace
("provrepair_quarantine", *namespace): outside the agent's namespace prefix, so its searches
(which match namespace prefixes) never return it. Needs the `[langgraph]` extra.

Works with any BaseStore through the Python API (`LangGraphMemory(store)`, or
`AsyncLangGraphMemory(store)` with `apply_patch_async` for AsyncSqliteStore and
AsyncPostgresStore): pass the agent's own store object, so its embedding index embeds what the
patch writes and semantic `search(query=...)` finds the corrected records. The CLI opens
SqliteStore (`sqlite_store`) and PostgresStore (`postgres_store`) itself, with the index
named by `--index` (`load_index`).

Transactions (check and writes one unit, repair/appliers/__init__.py): SqliteStore opens a
transaction per call (`BEGIN` … `COMMIT` on its connection); inside ours (`BEGIN IMMEDIATE`,
which also holds SQLite's write lock against the agent and other appliers) those two statements
are swallowed, so every call joins it. PostgresStore: an advisory lock per namespace, taken on
the connection before the transaction begins (so appliers queue, and each one's snapshot is
taken after the one before it committed: overlapping applies end as one apply), then one
SERIALIZABLE transaction on that connection (psycopg turns the store's own transaction blocks
into savepoints); a concurrent write by the agent makes the commit fail, reported as a
conflict. The lock is released after the commit, or by the server when the connection dies.
InMemoryStore has no transactions (one process: nothing to race). Through the Python API, apply
while no other thread of the agent uses the same store object: its calls would join the
transaction.
"""

from __future__ import annotations

import importlib
import json
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from pathlib import Path
from typing import Any, cast

from provrepair.provenance.errors import ConfigError, PatchConflict, TargetMismatch

QUARANTINE = "provrepair_quarantine"
_BUSY_TIMEOUT_S = 60.0  # an applier waits this long for another one's SQLite write lock


def check_namespace(namespace: tuple[str, ...]) -> tuple[str, ...]:
    """LangGraph's namespace rules, as one ConfigError line naming the namespace (LangGraph's
    own check raises at the first write, after the target check)."""
    namespace = tuple(namespace)
    shown = "/".join(namespace)
    problem = ("is empty" if not namespace
               else "has an empty part" if not all(namespace)
               else "starts with 'langgraph' (reserved by LangGraph)" if namespace[0] == "langgraph"
               else "has a '.' in a part" if any("." in part for part in namespace)
               else "has a NUL character" if any("\x00" in part for part in namespace)
               else None)
    if problem is not None:
        raise ConfigError(f"--namespace {shown!r} {problem}: not a LangGraph namespace")
    return namespace


def value_text(value: dict[str, Any] | None, value_key: str) -> str | None:
    """A record's content in a LangGraph value: the text under `value_key`, or the JSON (sorted
    keys) of a structure there; None when the value has no such field."""
    if value is None or value.get(value_key) is None:
        return None
    field = value[value_key]
    return field if isinstance(field, str) else json.dumps(field, sort_keys=True,
                                                           ensure_ascii=False)


def value_with(old: dict[str, Any] | None, value_key: str, content: str) -> dict[str, Any]:
    """`old` with its content replaced: a structure again where the agent kept one (the
    content the JSON of one), text otherwise; the value's other fields kept."""
    field: Any = content
    if old is not None and old.get(value_key) is not None and not isinstance(old[value_key], str):
        try:
            parsed = json.loads(content)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, type(old[value_key])):
            field = parsed
    return {**(old or {}), value_key: field}


def require_langgraph() -> None:
    try:
        import langgraph.store.base  # noqa: F401
    except ImportError as exc:
        raise ConfigError("applying to LangGraph needs the langgraph extra: "
                          "pip install 'provrepair[langgraph]'") from exc


class _Items:
    """Namespaces and values: the part the sync and async memories share."""

    def __init__(self, store: Any, namespace: tuple[str, ...] = ("memories",),
                 value_key: str = "content"):
        # behind a recording wrapper (provrepair.integrations), the agent's own store: an
        # applier's reads and writes are not the agent's, and its transaction needs the store
        store = getattr(store, "unrecorded", store)
        self.store, self.namespace, self.value_key = store, check_namespace(namespace), value_key
        self.hidden = (QUARANTINE, *self.namespace)

    @property
    def memory_namespace(self) -> str:
        """The namespace as a task names it (`memory_namespace`: parts joined by '/')."""
        return "/".join(self.namespace)

    def content(self, item: Any) -> str | None:
        return None if item is None else value_text(item.value, self.value_key)

    def value(self, old: Any, content: str) -> dict[str, Any]:
        return value_with(old.value if old else None, self.value_key, content)

    def lock_key(self) -> str:
        return json.dumps(self.namespace)


class LangGraphMemory(_Items):
    def __init__(self, store: Any, namespace: tuple[str, ...] = ("memories",),
                 value_key: str = "content", *, owned: Any = None):
        super().__init__(store, namespace, value_key)
        self._owned = owned  # a connection this object opened (closed by close())

    def get(self, memory_id: str) -> str | None:
        return self.content(self.store.get(self.namespace, memory_id))

    def quarantined(self, memory_id: str) -> str | None:
        return self.content(self.store.get(self.hidden, memory_id))

    def put(self, memory_id: str, content: str) -> None:
        old = self.store.get(self.namespace, memory_id)
        self.store.put(self.namespace, memory_id, self.value(old, content))
        self.store.delete(self.hidden, memory_id)

    def remove(self, memory_id: str) -> None:
        self.store.delete(self.namespace, memory_id)
        self.store.delete(self.hidden, memory_id)

    def quarantine(self, memory_id: str) -> None:
        item = self.store.get(self.namespace, memory_id)
        if item is not None:
            self.store.put(self.hidden, memory_id, item.value)
            self.store.delete(self.namespace, memory_id)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        kind = type(self.store).__name__
        if kind == "SqliteStore":
            with _sqlite_transaction(self.store):
                yield
        elif kind == "PostgresStore":
            with _postgres_transaction(self.store, self.lock_key()):
                yield
        else:
            yield

    def close(self) -> None:
        if self._owned is not None:
            self._owned.close()


class AsyncLangGraphMemory(_Items):
    """The same operations on an async store (AsyncSqliteStore, AsyncPostgresStore…), for
    `apply_patch_async` from inside the agent's event loop."""

    async def get(self, memory_id: str) -> str | None:
        return self.content(await self.store.aget(self.namespace, memory_id))

    async def quarantined(self, memory_id: str) -> str | None:
        return self.content(await self.store.aget(self.hidden, memory_id))

    async def put(self, memory_id: str, content: str) -> None:
        old = await self.store.aget(self.namespace, memory_id)
        await self.store.aput(self.namespace, memory_id, self.value(old, content))
        await self.store.adelete(self.hidden, memory_id)

    async def remove(self, memory_id: str) -> None:
        await self.store.adelete(self.namespace, memory_id)
        await self.store.adelete(self.hidden, memory_id)

    async def quarantine(self, memory_id: str) -> None:
        item = await self.store.aget(self.namespace, memory_id)
        if item is not None:
            await self.store.aput(self.hidden, memory_id, item.value)
            await self.store.adelete(self.namespace, memory_id)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        kind = type(self.store).__name__
        if kind == "AsyncSqliteStore":
            async with _async_sqlite_transaction(self.store):
                yield
        elif kind == "AsyncPostgresStore":
            async with _async_postgres_transaction(self.store, self.lock_key()):
                yield
        else:
            yield


# -- transactions ------------------------------------------------------------------------------

class _JoinedConnection:
    """The store's connection while our transaction is open: its own per-call `BEGIN` and
    `COMMIT` are dropped (they would fail inside ours), every other call goes through."""

    def __init__(self, conn: Any, noop: Callable[[], Any]):
        self._conn, self._noop = conn, noop

    def execute(self, sql: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(sql, str) and sql.strip().upper() in ("BEGIN", "COMMIT"):
            return self._noop()
        return self._conn.execute(sql, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


@contextmanager
def _sqlite_transaction(store: Any) -> Iterator[None]:
    if not store.is_setup:
        store.setup()
    conn = store.conn
    with store.lock:
        conn.execute("BEGIN IMMEDIATE")
    store.conn = _JoinedConnection(conn, conn.cursor)
    try:
        yield
    except BaseException:
        store.conn = conn
        conn.execute("ROLLBACK")
        raise
    store.conn = conn
    conn.execute("COMMIT")


async def _done() -> None:
    return None


@asynccontextmanager
async def _async_sqlite_transaction(store: Any) -> AsyncIterator[None]:
    if not store.is_setup:
        await store.setup()
    conn = store.conn
    async with store.lock:
        await conn.execute("BEGIN IMMEDIATE")
    store.conn = _JoinedConnection(conn, _done)
    try:
        yield
    except BaseException:
        store.conn = conn
        await conn.execute("ROLLBACK")
        raise
    store.conn = conn
    await conn.execute("COMMIT")


# a session-level lock: held across the transaction, released after it (or when the
# connection ends: a killed applier holds nothing)
_LOCK = "SELECT pg_advisory_lock(hashtext(%s))"
_UNLOCK = "SELECT pg_advisory_unlock(hashtext(%s))"


def _is_pool(conn: Any) -> bool:
    try:
        from psycopg_pool import AsyncConnectionPool, ConnectionPool
    except ImportError:
        return False
    return isinstance(conn, (ConnectionPool, AsyncConnectionPool))


@contextmanager
def _postgres_transaction(store: Any, lock_key: str) -> Iterator[None]:
    from psycopg import errors

    if _is_pool(store.conn):  # a pool: hold one connection for the whole transaction
        with store.conn.connection() as conn:
            pool, store.conn = store.conn, conn
            try:
                with _postgres_transaction(store, lock_key):
                    yield
            finally:
                store.conn = pool
        return
    # the lock first, in a statement of its own: inside the serializable transaction the
    # statement taking it would also take the snapshot, before the lock is granted
    store.conn.execute(_LOCK, (lock_key,))
    try:
        with store.conn.transaction():
            store.conn.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
            yield
    except errors.SerializationFailure as exc:
        raise PatchConflict("the memory store changed while the patch was applied (a "
                            "concurrent write); nothing applied") from exc
    finally:
        if not store.conn.closed:
            with suppress(errors.Error):  # a broken connection released it already
                store.conn.execute(_UNLOCK, (lock_key,))


@asynccontextmanager
async def _async_postgres_transaction(store: Any, lock_key: str) -> AsyncIterator[None]:
    from psycopg import errors

    if _is_pool(store.conn):
        async with store.conn.connection() as conn:
            pool, store.conn = store.conn, conn
            try:
                async with _async_postgres_transaction(store, lock_key):
                    yield
            finally:
                store.conn = pool
        return
    await store.conn.execute(_LOCK, (lock_key,))  # before the snapshot, as above
    try:
        async with store.conn.transaction():
            await store.conn.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
            yield
    except errors.SerializationFailure as exc:
        raise PatchConflict("the memory store changed while the patch was applied (a "
                            "concurrent write); nothing applied") from exc
    finally:
        if not store.conn.closed:
            with suppress(errors.Error):
                await store.conn.execute(_UNLOCK, (lock_key,))


# -- opening the agent's store from the CLI ----------------------------------------------------

def sqlite_module(*, extensions: bool) -> Any:
    """The `sqlite3` module to open the agent's SqliteStore with. An embedding index needs
    SQLite's loadable extensions (sqlite-vec); a Python built without them (some pyenv builds)
    gets `pysqlite3` (the `pysqlite3-binary` wheel of the [langgraph] extra on Linux), which
    reads and writes the same database file."""
    if not extensions or hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        from pysqlite3 import dbapi2  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        raise ConfigError("--index: this Python's sqlite3 cannot load extensions (the index "
                          "needs sqlite-vec): pip install pysqlite3-binary") from exc
    return dbapi2


def sqlite_store(path: str, namespace: tuple[str, ...], value_key: str = "content",
                 index: dict[str, Any] | None = None) -> LangGraphMemory:
    """The agent's LangGraph SqliteStore at `path`: it must exist and hold LangGraph's `store`
    table (a checkpointer's database does not); nothing is created."""
    require_langgraph()
    from langgraph.store.sqlite import SqliteStore

    where = Path(path)
    if not where.is_file():
        raise TargetMismatch(f"langgraph-sqlite:{path} "
                             f"{'is not a file' if where.exists() else 'does not exist'}: give "
                             "the agent's store database (nothing is created); nothing written")
    driver = sqlite_module(extensions=index is not None)
    try:
        conn = driver.connect(f"{where.resolve().as_uri()}?mode=rw", uri=True,
                              timeout=_BUSY_TIMEOUT_S, check_same_thread=False,
                              isolation_level=None)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except driver.Error as exc:
        raise TargetMismatch(f"langgraph-sqlite:{path}: cannot open for writing ({exc}); "
                             "nothing written") from exc
    if "store" not in tables:
        conn.close()
        raise TargetMismatch(f"langgraph-sqlite:{path} has no LangGraph `store` table (a "
                             "checkpointer's database?): not the agent's memory store; "
                             "nothing written")
    store = SqliteStore(conn, index=cast(Any, index))
    return LangGraphMemory(store, namespace, value_key, owned=conn)


def postgres_store(conninfo: str, namespace: tuple[str, ...], value_key: str = "content",
                   index: dict[str, Any] | None = None) -> LangGraphMemory:
    """The agent's LangGraph PostgresStore at `conninfo` (a postgresql:// URI or key=value
    string): it must hold LangGraph's `store` table; nothing is created."""
    require_langgraph()
    import psycopg
    from langgraph.store.postgres import PostgresStore
    from psycopg.rows import dict_row

    try:
        conn = psycopg.connect(conninfo, autocommit=True, prepare_threshold=0,
                               row_factory=dict_row)
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TargetMismatch(f"langgraph-postgres: cannot connect ({reason}); "
                             "nothing written") from exc
    found = conn.execute("SELECT to_regclass('store') IS NOT NULL AS found").fetchone()
    if not found or not found["found"]:
        conn.close()
        raise TargetMismatch("langgraph-postgres: the database has no LangGraph `store` "
                             "table: not the agent's memory store; nothing written")
    store = PostgresStore(conn, index=cast(Any, index))
    return LangGraphMemory(store, namespace, value_key, owned=conn)


def load_index(path: str) -> dict[str, Any]:
    """A LangGraph index config from a JSON file: `{"embed": "module:callable", "dims": N,
    "fields": [...]}` (fields optional): the agent's embedding function, so what the patch
    writes is embedded as the agent's own writes are."""
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"--index {path}: cannot read a JSON index config ({exc})") from exc
    if not isinstance(config, dict) or not isinstance(config.get("embed"), str) \
            or not isinstance(config.get("dims"), int) or not set(config) <= {
                "embed", "dims", "fields"}:
        raise ConfigError(f"--index {path}: expected {{\"embed\": \"module:callable\", "
                          "\"dims\": N, \"fields\": [...]}")
    module, _, name = config["embed"].partition(":")
    try:
        embed = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"--index {path}: cannot import embed {config['embed']!r} "
                          f"({exc})") from exc
    if not callable(embed):
        raise ConfigError(f"--index {path}: embed {config['embed']!r} is not callable")
    return {**config, "embed": embed}

