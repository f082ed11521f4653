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
                          a statement itself may run longer: 600 s on FalkorDB)

Credentials never travel in a URI (URIs are echoed in messages); they come from the
variables a `Credentials` names, so an error can say which variable to set.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from provrepair.provenance.errors import ConfigError, ProvrepairError, StoreUnavailable
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.embedded import EmbeddedServer, ServerInfo
from provrepair.provenance.vocab import FINISHED_RUN_STATUSES

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
            vault_database: str | None = None, graph: str = DEFAULT_GRAPH) -> GraphStore:
    """Open the store at `uri` (Neo4j or an external FalkorDB) with its indexes ready."""
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
    return _with_schema(store)


def _not_a_store(uri: str, exc: Exception) -> ProvrepairError:
    if isinstance(exc, ValueError):  # a malformed URI (urllib, the drivers)
        return ConfigError(f"{uri!r} is not a valid URI: {exc}")
    # not a graph store there (a protocol error), and the like
    return StoreUnavailable(f"cannot use {uri} as a graph store: {type(exc).__name__}: {exc}")


def _refused_credentials(exc: BaseException) -> bool:
    """The driver's own authentication error, here or as the cause of our mapped one."""
    import neo4j.exceptions as neo
    import redis.exceptions as rex

    for err in (exc, exc.__cause__):
        if isinstance(err, (rex.AuthenticationError, neo.AuthError)):
            return True
        if isinstance(err, rex.ResponseError) and str(err).startswith(("NOAUTH", "WRONGPASS")):
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
    parts = urlsplit(uri)
    timeout = connect_timeout()
    if parts.scheme in NEO4J_SCHEMES:
        from provrepair.provenance.store.neo4j import Neo4jStore

        if credentials.password is None:
            raise ConfigError(f"{credentials.password_var} is required for Neo4j ({uri})")
        return Neo4jStore(uri, credentials.user, credentials.password, database=database,
                          vault_database=vault_database, connect_timeout=timeout)
    if parts.scheme == "falkordb":
        from provrepair.provenance.store.falkordb import FalkorDBStore

        try:
            host, port = parts.hostname, parts.port
        except ValueError:  # a port out of range or not a number
            host, port = None, None
        if not host or not port:
            raise ConfigError(f"{uri!r}: expected falkordb://HOST:PORT")
        return FalkorDBStore(host, port, credentials.password, graph=graph,
                             vault_graph=f"{graph}_vault", connect_timeout=timeout)
    raise ConfigError(f"URI scheme {parts.scheme!r} of {uri!r} is not supported; use one of "
                      f"{', '.join(sorted(NEO4J_SCHEMES))} or falkordb")


def _with_schema(store: GraphStore) -> GraphStore:
    try:
        store.ensure_schema()
        # runs recorded before they carried `finished` (provenance/vocab.py RunStatus)
        store.run("backfill_run_finished",
                  {"finished_statuses": sorted(FINISHED_RUN_STATUSES)})
    except BaseException:
        store.close()
        raise
    return store


def open_store(home: Path | None = None,
               on_start: Callable[[ServerInfo], None] | None = None) -> GraphStore:
    """Open the configured store; start the embedded one if needed (`on_start` is told)."""
    uri = os.environ.get("PROVREPAIR_URI", "").strip()
    if uri:
        return connect(uri, STORE_CREDENTIALS,
                       database=os.environ.get("PROVREPAIR_DATABASE", "neo4j"),
                       vault_database=os.environ.get("PROVREPAIR_VAULT_DATABASE"),
                       graph=graph_name())
    return _with_schema(_open_embedded(home, on_start))


def _open_embedded(home: Path | None,
                   on_start: Callable[[ServerInfo], None] | None) -> GraphStore:
    from provrepair.provenance.store.falkordb import FalkorDBStore

    server = EmbeddedServer(home)
    info, started = server.start()
    if started and on_start is not None:
        on_start(info)
    graph = graph_name()
    return FalkorDBStore(info.host, info.port, server.password(), graph=graph,
                         vault_graph=f"{graph}_vault", connect_timeout=connect_timeout())


COMPACT_AFTER_ELEMENTS = 20_000  # nodes + edges written by one command


def compact_after_write(elements: int) -> None:
    """After a large write to the embedded store, have it rewrite its append-only log
    (in the background): a restart then loads a snapshot, not every statement (issue 25)."""
    if elements >= COMPACT_AFTER_ELEMENTS and not os.environ.get("PROVREPAIR_URI", "").strip():
        EmbeddedServer().request_rewrite()


def graph_name() -> str:
    """PROVREPAIR_GRAPH, or the default graph name."""
    return os.environ.get("PROVREPAIR_GRAPH", "").strip() or DEFAULT_GRAPH
