"""Which store a command talks to, from the environment.

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
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from provenance.errors import ConfigError
from provenance.store.base import GraphStore
from provenance.store.embedded import EmbeddedServer, ServerInfo

NEO4J_SCHEMES = {"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"}


def open_store(home: Path | None = None,
               on_start: Callable[[ServerInfo], None] | None = None) -> GraphStore:
    """Open the configured store; start the embedded one if needed (`on_start` is told)."""
    uri = os.environ.get("PROVREPAIR_URI", "").strip()
    store = _open_uri(uri) if uri else _open_embedded(home, on_start)
    store.ensure_schema()
    return store


def _open_uri(uri: str) -> GraphStore:
    parts = urlsplit(uri)
    if parts.username or parts.password:
        raise ConfigError("PROVREPAIR_URI must not hold credentials; "
                          "set PROVREPAIR_USER and PROVREPAIR_PASSWORD instead")
    password = os.environ.get("PROVREPAIR_PASSWORD")
    if parts.scheme in NEO4J_SCHEMES:
        from provenance.store.neo4j import Neo4jStore

        if not password:
            raise ConfigError("PROVREPAIR_PASSWORD is required for a Neo4j PROVREPAIR_URI")
        return Neo4jStore(uri, os.environ.get("PROVREPAIR_USER", "neo4j"), password,
                          database=os.environ.get("PROVREPAIR_DATABASE", "neo4j"),
                          vault_database=os.environ.get("PROVREPAIR_VAULT_DATABASE"))
    if parts.scheme == "falkordb":
        from provenance.store.falkordb import FalkorDBStore

        if not parts.hostname or not parts.port:
            raise ConfigError(f"PROVREPAIR_URI {uri!r}: expected falkordb://HOST:PORT")
        return FalkorDBStore(parts.hostname, parts.port, password, **_graph_names())
    raise ConfigError(f"PROVREPAIR_URI scheme {parts.scheme!r} is not supported; use one of "
                      f"{', '.join(sorted(NEO4J_SCHEMES))} or falkordb")


def _open_embedded(home: Path | None,
                   on_start: Callable[[ServerInfo], None] | None) -> GraphStore:
    from provenance.store.falkordb import FalkorDBStore

    server = EmbeddedServer(home)
    info, started = server.start()
    if started and on_start is not None:
        on_start(info)
    return FalkorDBStore(info.host, info.port, server.password(), **_graph_names())


def _graph_names() -> dict[str, Any]:
    graph = os.environ.get("PROVREPAIR_GRAPH", "").strip() or "provrepair"
    return {"graph": graph, "vault_graph": f"{graph}_vault"}
