"""The schema is written by `db start` / `db migrate` only (issue 26 item 4, issue 27): a read
command writes nothing, not even on a graph no one has written yet, and answers there as on
an empty graph; `db migrate` creates the indexes, and a second run changes nothing."""

from __future__ import annotations

from pathlib import Path

from provrepair.provenance.store.embedded import EmbeddedServer, ServerInfo
from provrepair.provenance.store.falkordb import FalkorDBStore
from tests.conftest import EXAMPLES, Cli
from tests.integration.test_vault_indexes import indexed


def test_reads_write_nothing_and_migrate_makes_the_schema(cli: Cli, server: ServerInfo,
                                                         server_home: Path, graph_name: str) -> None:
    store = FalkorDBStore(server.host, server.port, EmbeddedServer(server_home).password(),
                          graph=graph_name, vault_graph=f"{graph_name}_vault")
    with store:
        for args in (["tasks"], ["db", "status"], ["history", "--task", "nope"]):
            done = cli(*args)
            assert done.returncode in (0, 2) and "Traceback" not in done.stderr, (args, done.stderr)
        assert cli("tasks").returncode == 0
        assert graph_name not in store.graph_names()  # nothing written, not even the graph
        first = cli("db", "migrate")
        assert first.returncode == 0 and "migrated falkordb" in first.stdout, first.stderr
        schema = indexed(store, "graph")
        assert {("Node", "uid"), ("Node", "task_key"), ("Task", "task_key")} <= schema
        assert cli("db", "migrate").returncode == 0 and indexed(store, "graph") == schema
        assert cli("ingest", str(EXAMPLES / "shopping_poisoned_price.json")).returncode == 0
        assert "shopping_task_014" in cli("tasks").stdout


def test_a_writer_indexes_the_falkordb_graph_it_writes(cli: Cli, server: ServerInfo,
                                                      server_home: Path, graph_name: str) -> None:
    """A new graph on a running server (another PROVREPAIR_GRAPH): `ingest` creates the indexes
    it needs before writing (without them a large ingest took minutes), `tasks` still none."""
    store = FalkorDBStore(server.host, server.port, EmbeddedServer(server_home).password(),
                          graph=graph_name, vault_graph=f"{graph_name}_vault")
    with store:
        assert cli("tasks").returncode == 0 and graph_name not in store.graph_names()
        assert cli("ingest", str(EXAMPLES / "shopping_poisoned_price.json")).returncode == 0
        assert {("Node", "uid"), ("Node", "task_key"), ("Task", "task_key")} <= indexed(store, "graph")
