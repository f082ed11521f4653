"""The store `provrepair export --to URI` writes to.

    bolt://, bolt+s://, bolt+ssc://, neo4j://, neo4j+s://, neo4j+ssc://   Neo4j 5
    falkordb://HOST:PORT                                                  a FalkorDB server

Credentials never travel in the URI (it is echoed in messages): PROVREPAIR_EXPORT_USER
(default neo4j) and PROVREPAIR_EXPORT_PASSWORD (required for Neo4j; optional for FalkorDB).
They are not printed or logged. `database` picks the Neo4j database, `graph` the FalkorDB
graph (its evaluation vault is `<graph>_vault`, as for PROVREPAIR_GRAPH).
"""

from __future__ import annotations

import os
from urllib.parse import SplitResult, urlsplit

from provenance.errors import ConfigError, ProvrepairError, map_driver_error
from provenance.store.base import GraphStore
from provenance.store.config import NEO4J_SCHEMES

USER_VAR, PASSWORD_VAR = "PROVREPAIR_EXPORT_USER", "PROVREPAIR_EXPORT_PASSWORD"


def open_target(uri: str, *, database: str = "neo4j", graph: str = "provrepair") -> GraphStore:
    """Open (and prepare the indexes of) the export target named by `uri`."""
    parts = urlsplit(uri)
    if parts.username or parts.password:
        raise ConfigError(f"--to must not hold credentials; set {USER_VAR} and {PASSWORD_VAR}")
    try:
        store = _connect(uri, parts, database, graph)
    except ProvrepairError:
        raise
    except Exception as exc:  # refused credentials, unreachable host: the driver's error
        raise map_driver_error(exc, f"export to {uri}") from exc
    try:
        store.ensure_schema()
    except BaseException:
        store.close()
        raise
    return store


def _connect(uri: str, parts: SplitResult, database: str, graph: str) -> GraphStore:
    scheme = parts.scheme
    password = os.environ.get(PASSWORD_VAR) or None
    if scheme in NEO4J_SCHEMES:
        from provenance.store.neo4j import Neo4jStore

        if password is None:
            raise ConfigError(f"{PASSWORD_VAR} is required to export to Neo4j ({uri})")
        return Neo4jStore(uri, os.environ.get(USER_VAR) or "neo4j", password,
                          database=database)
    if scheme == "falkordb":
        from provenance.store.falkordb import FalkorDBStore

        try:
            host, port = parts.hostname, parts.port
        except ValueError:
            host, port = None, None
        if not host or not port:
            raise ConfigError(f"--to {uri!r}: expected falkordb://HOST:PORT")
        return FalkorDBStore(host, port, password, graph=graph, vault_graph=f"{graph}_vault")
    raise ConfigError(f"--to scheme {scheme!r} is not supported; use one of "
                      f"{', '.join(sorted(NEO4J_SCHEMES))} or falkordb")
