"""Shared fixtures: the real embedded FalkorDB server and a Bolt server (tests/bolt_server.py).

`store` is parametrized over both engines: the same test bodies run on FalkorDB and over
Bolt with the Neo4j driver (an existing Neo4j, Neo4j in Docker, or ArcadeDB's server from
the dev extra, in that order). Each test gets its own FalkorDB graph, so tests never see each other's data.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.embedded import EmbeddedServer, ServerInfo
from tests.bolt_proxy import BoltProxy
from tests.bolt_server import ARCADEDB, BoltServer, ServerStartError, describe_choice
from tests.bolt_server import bolt_server as start_bolt_server

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
# mem0 (tests/mem0_memory.py) reads these when it is imported: no telemetry over the network,
# its own files (~/.mem0) in a temporary directory; the CLI's subprocesses inherit them
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("MEM0_DIR", str(Path(tempfile.gettempdir()) / "provrepair-tests-mem0"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "arcadedb_differs(reason): where ArcadeDB's Bolt server "
                            "differs from Neo4j; a strict xfail there only")


def pytest_report_header(config: pytest.Config) -> str:
    return f"bolt server for the neo4j-marked tests: {describe_choice()}"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The same line at the end, where `-q` (make test) shows it too."""
    if config.getoption("markexpr", "") != "not neo4j":
        terminalreporter.write_line(f"bolt server for the neo4j-marked tests: {describe_choice()}")


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
def bench_env(monkeypatch: pytest.MonkeyPatch, server_home: Path, graph_name: str) -> str:
    """A benchmark run in-process against the session's embedded server; PROVREPAIR_GRAPH is
    the user's graph, which the run must leave empty (it works in its own graphs)."""
    monkeypatch.setenv("PROVREPAIR_HOME", str(server_home))
    monkeypatch.setenv("PROVREPAIR_GRAPH", graph_name)
    monkeypatch.delenv("PROVREPAIR_URI", raising=False)
    return graph_name


@pytest.fixture
def falkordb_store(server: ServerInfo, server_home: Path, graph_name: str) -> Iterator[GraphStore]:
    from provrepair.provenance.store.falkordb import FalkorDBStore

    store = FalkorDBStore(server.host, server.port, EmbeddedServer(server_home).password(),
                          graph=graph_name, vault_graph=f"{graph_name}_vault")
    store.ensure_schema()
    yield store
    store.close()


@pytest.fixture(scope="session")
def bolt_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoltServer]:
    """The Bolt server of this test process (tests/bolt_server.py: an existing Neo4j, Neo4j
    in Docker, or ArcadeDB from the dev extra). Without one the Neo4j-marked tests skip,
    saying why, or fail under PROVREPAIR_REQUIRE_NEO4J=1 (CI)."""
    try:
        with start_bolt_server(tmp_path_factory.mktemp("bolt")) as server:
            yield server
    except (ImportError, ServerStartError) as exc:
        message = f"Neo4j-marked tests need a Bolt server: {type(exc).__name__}: {exc}"
        if os.environ.get("PROVREPAIR_REQUIRE_NEO4J") == "1":  # a machine that must run them
            pytest.fail(message + " (PROVREPAIR_REQUIRE_NEO4J=1)")
        pytest.skip(message)


@pytest.fixture
def bolt_database(bolt_server: BoltServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """A clean database for this test; where ArcadeDB differs from Neo4j (the test's
    `arcadedb_differs` mark says how), the test is a strict expected failure there."""
    differs = request.node.get_closest_marker("arcadedb_differs")
    if differs is not None and bolt_server.kind == ARCADEDB:
        request.node.add_marker(pytest.mark.xfail(strict=True, reason=f"ArcadeDB: {differs.args[0]}"))
    name = bolt_server.new_database()
    yield name
    bolt_server.drop_database(name)


@pytest.fixture
def bolt_proxy(bolt_server: BoltServer) -> Iterator[BoltProxy]:
    """A TCP proxy to the Bolt server that can cut a connection mid-command
    (tests/bolt_proxy.py); also the same server under another address."""
    address = urlsplit(bolt_server.uri)
    assert address.hostname is not None and address.port is not None
    with BoltProxy(address.hostname, address.port) as proxy:
        yield proxy


@pytest.fixture
def neo4j_store(bolt_server: BoltServer, bolt_database: str) -> Iterator[GraphStore]:
    from provrepair.provenance.store.neo4j import Neo4jStore

    store = Neo4jStore(bolt_server.uri, bolt_server.user, bolt_server.password,
                       database=bolt_database)
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
    """The console script against either engine: the embedded store, or the Bolt server
    through PROVREPAIR_URI and PROVREPAIR_DATABASE."""
    cli = Cli(server_home, graph_name)
    if request.param == "neo4j":
        request.getfixturevalue("neo4j_store")  # a clean database with its schema
        bolt: BoltServer = request.getfixturevalue("bolt_server")
        cli.env.update(PROVREPAIR_URI=bolt.uri, PROVREPAIR_USER=bolt.user,
                       PROVREPAIR_PASSWORD=bolt.password,
                       PROVREPAIR_DATABASE=request.getfixturevalue("bolt_database"))
    return cli


@pytest.fixture
def effects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the side-effect tools (tests/side_effect_tools.py) append each effect to."""
    path = tmp_path / "effects.jsonl"
    monkeypatch.setenv("PROVREPAIR_TEST_EFFECTS", str(path))
    return path
