"""Shared fixtures: the real embedded FalkorDB server and, where Docker answers, Neo4j 5.

`store` is parametrized over both engines: the same test bodies run on FalkorDB (always)
and on Neo4j through testcontainers (skipped, with the reason, when no Docker engine
answers). Each test gets its own FalkorDB graph, so tests never see each other's data.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.embedded import EmbeddedServer, ServerInfo

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


@pytest.fixture(scope="session")
def server_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A throwaway data directory with a running embedded server, for the whole run."""
    home = tmp_path_factory.mktemp("provrepair-home")
    EmbeddedServer(home).start()
    yield home
    EmbeddedServer(home).stop()


@pytest.fixture(scope="session")
def server(server_home: Path) -> ServerInfo:
    info = EmbeddedServer(server_home).running()
    assert info is not None
    return info


@pytest.fixture
def graph_name() -> str:
    return f"test_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def falkordb_store(server: ServerInfo, server_home: Path, graph_name: str) -> Iterator[GraphStore]:
    from provrepair.provenance.store.falkordb import FalkorDBStore

    store = FalkorDBStore(server.host, server.port, EmbeddedServer(server_home).password(),
                          graph=graph_name, vault_graph=f"{graph_name}_vault")
    store.ensure_schema()
    yield store
    store.close()


@pytest.fixture(scope="session")
def neo4j_container() -> Iterator[Any]:
    reason = docker_unavailable_reason()
    if reason:
        message = f"Neo4j tests need a Docker engine for testcontainers: {reason}"
        if os.environ.get("PROVREPAIR_REQUIRE_NEO4J") == "1":  # a machine that must run them
            pytest.fail(message + " (PROVREPAIR_REQUIRE_NEO4J=1)")
        pytest.skip(message)
    from testcontainers.neo4j import Neo4jContainer

    with Neo4jContainer("neo4j:5") as container:
        yield container


def docker_unavailable_reason() -> str | None:
    try:
        import docker

        docker.from_env(timeout=3).ping()
    except Exception as exc:  # any failure means: no engine we can use
        return f"no Docker engine answers ({type(exc).__name__}: {str(exc)[:120]})"
    return None


@pytest.fixture
def neo4j_store(neo4j_container: Any) -> Iterator[GraphStore]:
    from provrepair.provenance.store.neo4j import Neo4jStore

    store = Neo4jStore(neo4j_container.get_connection_url(), neo4j_container.username,
                       neo4j_container.password)
    store._driver.execute_query("MATCH (n) DETACH DELETE n", database_="neo4j")
    store.ensure_schema()
    yield store
    store.close()


@pytest.fixture(params=["falkordb", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(request: pytest.FixtureRequest) -> GraphStore:
    """The same test body on both engines."""
    fixture = "falkordb_store" if request.param == "falkordb" else "neo4j_store"
    result: GraphStore = request.getfixturevalue(fixture)
    return result


class Cli:
    """Runs the real `provrepair` console script against the session server and one graph."""

    def __init__(self, home: Path, graph: str):
        self.env = {**os.environ, "PROVREPAIR_HOME": str(home), "PROVREPAIR_GRAPH": graph}
        self.env.pop("PROVREPAIR_URI", None)

    def __call__(self, *args: str, input: bytes | None = None,
                 timeout: float = 120) -> subprocess.CompletedProcess[str]:
        exe = Path(sys.executable).with_name("provrepair")
        return subprocess.run([str(exe), *args], input=input.decode() if input else None,
                              capture_output=True, text=True, env=self.env, timeout=timeout)


@pytest.fixture
def cli(server_home: Path, server: ServerInfo, graph_name: str) -> Cli:
    return Cli(server_home, graph_name)


@pytest.fixture(params=["falkordb", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def engine_cli(request: pytest.FixtureRequest, server_home: Path, server: ServerInfo,
               graph_name: str) -> Cli:
    """The console script against either engine: the embedded store, or Neo4j 5 through
    PROVREPAIR_URI (testcontainers; skipped, saying why, without a Docker engine)."""
    cli = Cli(server_home, graph_name)
    if request.param == "neo4j":
        request.getfixturevalue("neo4j_store")  # a clean database with its schema
        container = request.getfixturevalue("neo4j_container")
        cli.env.update(PROVREPAIR_URI=container.get_connection_url(),
                       PROVREPAIR_USER=container.username,
                       PROVREPAIR_PASSWORD=container.password)
    return cli

