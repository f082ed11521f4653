"""Which store a command talks to: `connect(uri, credentials)` for any URI, and
`open_store()` for the one the environment configures.

    PROVREPAIR_URI        unset: the embedded FalkorDB of PROVREPAIR_HOME, started on demand
                          bolt://, bolt+s://, bolt+ssc://, neo4j://, neo4j+s://, neo4j+ssc://
                          (routing for clusters and Aura): Neo4j 5 via the official driver
                          falkordb://host:port: an external FalkorDB via its native client
    PROVREPAIR_USER       Neo4j user (default neo4j)
    PROVREPAIR_PASSWORD   Neo4j / external FalkorDB password (never printed or logged)
    PROVREPAIR_DATABASE   Neo4j database (default neo4j; always passed to the driver)
    PROVREPAIR_VAULT_DATABASE  Neo4j database for evaluation-only data (default: the same)
    PROVREPAIR_GRAPH      FalkorDB graph name (default provrepair; the vault is <name>_vault),
                          so several independent stores can share one server
    PROVREPAIR_CONNECT_TIMEOUT  seconds to wait for a store to connect and answer (default 10;
                          a statement itself may run longer: 600 s on FalkorDB); on Neo4j
                          also how long a statement is retried after a lost connection

Credentials never travel in a URI (URIs are echoed in messages); they come from the
variables a `Credentials` names, so an error can say which variable to set.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from provrepair.provenance.agent_records import backfill_agent_records
from provrepair.provenance.errors import ConfigError, ProvrepairError, StoreUnavailable
from provrepair.provenance.registry import Registry
from provrepair.provenance.state.runs import run_params
from provrepair.provenance.store.base import GraphStore

if TYPE_CHECKING:
    from provrepair.provenance.store.embedded import ServerInfo

NEO4J_SCHEMES = {"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"}
DEFAULT_GRAPH = "provrepair"


@dataclass(frozen=True)
class Credentials:
    """A user and password read from two environment variables (named in errors)."""

    user_var: str
    password_var: str

    @property
    def user(self) -> str:
        return os.environ.get(self.user_var) or "neo4j"

    @property
    def password(self) -> str | None:
        return os.environ.get(self.password_var) or None


STORE_CREDENTIALS = Credentials("PROVREPAIR_USER", "PROVREPAIR_PASSWORD")
# the target of `provrepair export --to URI` (user default neo4j; password required for Neo4j)
EXPORT_CREDENTIALS = Credentials("PROVREPAIR_EXPORT_USER", "PROVREPAIR_EXPORT_PASSWORD")


def connect(uri: str, credentials: Credentials, *, database: str = "neo4j",
            vault_database: str | None = None, graph: str = DEFAULT_GRAPH,
            migrate: bool = False) -> GraphStore:
    """Open the store at `uri` (Neo4j or an external FalkorDB); with `migrate`, create its
    schema first (`migrate_store`). Without, nothing is written on connecting."""
    try:
        parts = urlsplit(uri)
    except ValueError as exc:  # e.g. bolt://[::1:7687
        raise ConfigError(f"{uri!r} is not a valid URI: {exc}") from exc
    if parts.username or parts.password:
        shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
        raise ConfigError(f"{shown!r} must not hold credentials (the URI is shown in messages); "
                          f"set {credentials.user_var} and {credentials.password_var} instead")
    try:
        store = _open_uri(uri, credentials, database, vault_database, graph)
    except Exception as exc:
        if _refused_credentials(exc):
            wanted = (credentials.password_var if parts.scheme == "falkordb" else
                      f"{credentials.user_var} (default neo4j) and {credentials.password_var}")
            raise StoreUnavailable(f"{uri} refused the credentials: set {wanted}") from exc
        if isinstance(exc, ProvrepairError):
            raise
        raise _not_a_store(uri, exc) from exc
    return _migrated(store) if migrate else store


def _not_a_store(uri: str, exc: Exception) -> ProvrepairError:
    if isinstance(exc, ValueError):  # a malformed URI (urllib, the drivers)
        return ConfigError(f"{uri!r} is not a valid URI: {exc}")
    # not a graph store there (a protocol error), and the like
    return StoreUnavailable(f"cannot use {uri} as a graph store: {type(exc).__name__}: {exc}")


def _refused_credentials(exc: BaseException) -> bool:
    """The driver's own authentication error, here or as the cause of our mapped one (a
    driver not loaded raised nothing: neither is imported for the check)."""
    rex = sys.modules.get("redis.exceptions")
    neo = sys.modules.get("neo4j.exceptions")
    for err in (exc, exc.__cause__):
        if neo is not None and isinstance(err, neo.AuthError):
            return True
        if rex is not None and isinstance(err, rex.AuthenticationError):
            return True
        if (rex is not None and isinstance(err, rex.ResponseError)
                and str(err).startswith(("NOAUTH", "WRONGPASS"))):
            return True
    return False


def connect_timeout() -> float:
    """PROVREPAIR_CONNECT_TIMEOUT in seconds (default 10)."""
    raw = os.environ.get("PROVREPAIR_CONNECT_TIMEOUT", "").strip() or "10"
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < 3600:
        raise ConfigError(f"PROVREPAIR_CONNECT_TIMEOUT={raw!r}: expected seconds, e.g. 10")
    return value


def _open_uri(uri: str, credentials: Credentials, database: str, vault_database: str | None,
              graph: str) -> GraphStore:
    scheme = urlsplit(uri).scheme
    factory = ENGINES.find(scheme)
    if factory is None:
        raise ConfigError(f"URI scheme {scheme!r} of {uri!r} is not supported; use one of "
                          f"{', '.join(ENGINES.names())} (plugins add schemes through the "
                          "'provrepair.engines' entry points)")
    return factory(uri, credentials, database=database, vault_database=vault_database,
                   graph=graph, connect_timeout=connect_timeout())


def _open_neo4j(uri: str, credentials: Credentials, *, database: str,
                vault_database: str | None, graph: str, connect_timeout: float) -> GraphStore:
    from provrepair.provenance.store.neo4j import Neo4jStore

    if credentials.password is None:
        raise ConfigError(f"{credentials.password_var} is required for Neo4j ({uri})")
    return Neo4jStore(uri, credentials.user, credentials.password, database=database,
                      vault_database=vault_database, connect_timeout=connect_timeout)


def _open_falkordb(uri: str, credentials: Credentials, *, database: str,
                   vault_database: str | None, graph: str, connect_timeout: float) -> GraphStore:
    from provrepair.provenance.store.falkordb import FalkorDBStore

    parts = urlsplit(uri)
    try:
        host, port = parts.hostname, parts.port
    except ValueError:  # a port out of range or not a number
        host, port = None, None
    if not host or not port:
        raise ConfigError(f"{uri!r}: expected falkordb://HOST:PORT")
    return FalkorDBStore(host, port, credentials.password, graph=graph,
                         vault_graph=f"{graph}_vault", connect_timeout=connect_timeout)


# URI scheme → factory(uri, credentials, *, database, vault_database, graph, connect_timeout);
# a package adds an engine through the "provrepair.engines" entry points (provenance/registry.py)
ENGINES: Registry[GraphStore] = Registry("engine", {
    **{scheme: _open_neo4j for scheme in sorted(NEO4J_SCHEMES)}, "falkordb": _open_falkordb})


def migrate_store(store: GraphStore) -> None:
    """The schema and data migrations, idempotent: the indexes and constraints of
    cypher/schema/<engine>/ and the back-fill of runs recorded before they carried
    `finished` (and the links of a shared memory's records, provenance/agent_records.py).
    Run by `provrepair db start` / `db migrate` (and when a command starts the
    embedded store), never on an ordinary connection: a read-only user (Neo4j Enterprise,
    Aura) can then run every read command. Without the schema every statement still works,
    only without indexes (slower), so a read on a store nobody migrated answers anyway."""
    store.ensure_schema()
    # runs recorded before they carried `finished` (provenance/state/runs.py)
    store.run("backfill_run_finished", run_params("finished_statuses"))
    # tasks of a memory namespace stored before their records were linked (issue 37)
    backfill_agent_records(store)


def _migrated(store: GraphStore) -> GraphStore:
    try:
        migrate_store(store)
    except BaseException:
        store.close()
        raise
    return store


def open_store(home: Path | None = None,
               on_start: Callable[[ServerInfo], None] | None = None, *,
               migrate: bool = False, stop_started_server: bool = False) -> GraphStore:
    """Open the configured store; start the embedded one if needed (`on_start` is told, and
    a store started here is migrated, as `db start` does). `migrate` migrates in any case.

    An embedded server started here keeps running for the next command (the CLI's way), unless
    `stop_started_server`: then closing the store stops it, and a script leaves nothing behind
    (a server that was already running is left as it was)."""
    uri = os.environ.get("PROVREPAIR_URI", "").strip()
    if uri:
        return connect(uri, STORE_CREDENTIALS,
                       database=os.environ.get("PROVREPAIR_DATABASE", "neo4j"),
                       vault_database=os.environ.get("PROVREPAIR_VAULT_DATABASE"),
                       graph=graph_name(), migrate=migrate)
    store, started = _open_embedded(home, on_start, stop_started_server)
    return _migrated(store) if migrate or started else store


def _open_embedded(home: Path | None, on_start: Callable[[ServerInfo], None] | None,
                   stop_started_server: bool = False) -> tuple[GraphStore, bool]:
    from provrepair.provenance.store.embedded import EmbeddedServer
    from provrepair.provenance.store.falkordb import FalkorDBStore

    server = EmbeddedServer(home)
    info, started = server.start()
    if started and on_start is not None:
        on_start(info)
    graph = graph_name()
    stop = server.stop if started and stop_started_server else None
    return FalkorDBStore(info.host, info.port, server.password(), graph=graph,
                         vault_graph=f"{graph}_vault", connect_timeout=connect_timeout(),
                         on_close=stop), started


COMPACT_AFTER_ELEMENTS = 20_000  # nodes + edges written by one command


def compact_after_write(elements: int) -> None:
    """After a large write to the embedded store, have it rewrite its append-only log
    (in the background): a restart then loads a snapshot, not every statement (issue 25)."""
    if elements >= COMPACT_AFTER_ELEMENTS and not os.environ.get("PROVREPAIR_URI", "").strip():
        from provrepair.provenance.store.embedded import EmbeddedServer

        EmbeddedServer().request_rewrite()


def graph_name() -> str:
    """PROVREPAIR_GRAPH, or the default graph name."""
    return os.environ.get("PROVREPAIR_GRAPH", "").strip() or DEFAULT_GRAPH
