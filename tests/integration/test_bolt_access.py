"""Over Bolt, as a user of a shared or managed Neo4j meets it: a missing database, a
read-only role, a cluster's routing refused, and the bookmark that carries a write to the
read after it (README, "Running on a Neo4j cluster or Aura"). One line and exit 2 for each
refusal; a read-only user runs every read command, because only `db start` / `db migrate`
write the schema."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.embedded import ServerInfo
from provrepair.provenance.store.neo4j import Neo4jStore
from tests.bolt_server import BoltServer
from tests.conftest import EXAMPLES, Cli

TASK = "shopping_task_014"
CASE = str(EXAMPLES / "shopping_poisoned_price.json")


def bolt_cli(home: Path, graph: str, uri: str, user: str, password: str, database: str) -> Cli:
    cli = Cli(home, graph)
    cli.env.update(PROVREPAIR_URI=uri, PROVREPAIR_USER=user, PROVREPAIR_PASSWORD=password,
                   PROVREPAIR_DATABASE=database)
    return cli


def one_line_error(done: object, kind: str) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)  # type: ignore[attr-defined]
    err: str = done.stderr.strip()  # type: ignore[attr-defined]
    assert err.startswith(f"{kind}: ") and "Traceback" not in err and "\n" not in err, err
    return err


@pytest.mark.neo4j
def test_a_missing_database_is_one_line(bolt_server: BoltServer, server_home: Path,
                                        server: ServerInfo, graph_name: str) -> None:
    cli = bolt_cli(server_home, graph_name, bolt_server.uri, bolt_server.user,
                   bolt_server.password, "nosuchdatabase")
    for args in (["tasks"], ["db", "migrate"], ["ingest", CASE]):
        err = one_line_error(cli(*args), "StoreUnavailable")
        assert "nosuchdatabase" in err and "PROVREPAIR_DATABASE" in err
        assert bolt_server.password not in err


@pytest.mark.neo4j
def test_a_read_only_user_runs_every_read_command(bolt_server: BoltServer, bolt_database: str,
                                                  server_home: Path, server: ServerInfo,
                                                  graph_name: str) -> None:
    credentials = bolt_server.reader(bolt_database)
    if credentials is None:
        pytest.skip("read-only roles need ArcadeDB or Neo4j Enterprise (Community has none)")
    reader = bolt_cli(server_home, graph_name, bolt_server.uri, *credentials, bolt_database)
    owner = bolt_cli(server_home, graph_name, bolt_server.uri, bolt_server.user,
                     bolt_server.password, bolt_database)
    assert reader("tasks").returncode == 0  # a store nobody migrated: read, no schema needed
    err = one_line_error(reader("db", "migrate"), "AccessDenied")
    assert "cypher/schema/" in err and "provrepair db migrate" in err
    assert owner("db", "migrate").returncode == 0
    assert owner("ingest", CASE).returncode == 0
    for args in (["tasks"], ["show", "--task", TASK], ["plan", "--task", TASK, "--no-record"],
                 ["db", "status"], ["history", "--task", TASK], ["memory", "--task", TASK]):
        done = reader(*args)
        assert done.returncode == 0, (args, done.stderr)
    assert TASK in reader("tasks").stdout
    one_line_error(reader("ingest", "--replace", CASE), "AccessDenied")


@pytest.fixture
def not_bolt() -> Iterator[int]:
    """A port that accepts connections and answers nothing a Bolt client understands."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def test_a_refused_routing_table_is_one_line(cli: Cli, not_bolt: int) -> None:
    cli.env.update(PROVREPAIR_URI=f"neo4j://127.0.0.1:{not_bolt}", PROVREPAIR_PASSWORD="x",
                   PROVREPAIR_CONNECT_TIMEOUT="3")
    err = one_line_error(cli("tasks"), "StoreUnavailable")
    assert f"neo4j://127.0.0.1:{not_bolt}" in err


@pytest.mark.neo4j
def test_a_write_hands_its_bookmark_to_the_next_read(neo4j_store: GraphStore) -> None:
    """A write statement (`run`, execute_query) leaves its bookmark where the reads look."""
    manager = neo4j_store._bookmarks  # type: ignore[attr-defined]
    lock = {"task_key": "~bookmarked", "owner": "me", "pid": 1, "host": "here", "now": 1,
            "purpose": "test", "stale_owner": ""}
    before = set(manager.get_bookmarks())
    neo4j_store.run("acquire_task_lock", lock)
    after_unit = set(manager.get_bookmarks())
    assert after_unit and after_unit != before  # what the next read waits for
    assert neo4j_store.run("get_task_lock", {"task_key": "~bookmarked"})[0]["holder"] == "me"
    neo4j_store.run("release_task_lock", {"task_key": "~bookmarked", "owner": "me"})
    assert set(manager.get_bookmarks()) not in (after_unit, set())


@pytest.mark.neo4j
def test_neo4j_scheme_on_a_single_server(bolt_server: BoltServer, bolt_database: str,
                                         neo4j_store: GraphStore) -> None:
    """`neo4j://` to one server that is no cluster: it routes every statement to itself
    (README, "Running on a Neo4j cluster or Aura")."""
    uri = bolt_server.uri.replace("bolt://", "neo4j://", 1)
    with Neo4jStore(uri, bolt_server.user, bolt_server.password, database=bolt_database) as store:
        lock = {"task_key": "~routed", "owner": "me", "pid": 1, "host": "here", "now": 1,
                "purpose": "test", "stale_owner": ""}
        store.run("acquire_task_lock", lock)  # a write
        assert store.run("get_task_lock", {"task_key": "~routed"})[0]["holder"] == "me"  # a read
