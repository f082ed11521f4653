"""`provrepair export`: a task copied to another store (a second FalkorDB graph here; Neo4j
through testcontainers where a Docker engine answers) is the same task, with its runs, marks
and repair-written nodes, labelled for Neo4j Browser; re-exporting converges; the saved
Browser queries run on the copy and return what the run decided."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from provrepair.provenance.keys import task_key
from provrepair.provenance.state.runs import run_params
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.embedded import EmbeddedServer, ServerInfo
from provrepair.provenance.store.falkordb import FalkorDBStore
from provrepair.provenance.store.neo4j import Neo4jStore
from tests.bolt_proxy import BoltProxy
from tests.bolt_server import ARCADEDB, BoltServer
from tests.conftest import EXAMPLES, Cli
from tests.helpers import example_raw

TASK = "shopping_task_014"
EXAMPLE = EXAMPLES / "shopping_poisoned_price.json"
DISPOSITION_LABELS = {"Faulty", "Seed", "Affected", "Supported", "Quarantined", "Invalidated",
                      "AnswerRelevant", "Replayed", "Preserved", "Suspicious", "Regenerated"}


@pytest.fixture
def copy_graph(graph_name: str) -> str:
    return f"{graph_name}_copy"


@pytest.fixture
def exporter(cli: Cli, server: ServerInfo, server_home: Path, copy_graph: str) -> Cli:
    """The same CLI, with the export credentials of the session server."""
    cli.env["PROVREPAIR_EXPORT_PASSWORD"] = EmbeddedServer(server_home).password()
    return cli


@pytest.fixture
def target(server: ServerInfo, server_home: Path, copy_graph: str) -> Iterator[FalkorDBStore]:
    store = FalkorDBStore(server.host, server.port, EmbeddedServer(server_home).password(),
                          graph=copy_graph, vault_graph=f"{copy_graph}_vault")
    yield store
    store.close()


def ok(done: Any) -> Any:
    assert done.returncode == 0, done.stderr
    return done


def export(cli: Cli, server: ServerInfo, graph: str, *extra: str) -> dict[str, Any]:
    done = ok(cli("export", "--task", TASK, "--to", f"falkordb://{server.host}:{server.port}",
                  "--graph", graph, "--json", *extra))
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def repaired(cli: Cli) -> dict[str, Any]:
    ok(cli("ingest", str(EXAMPLE)))
    report: dict[str, Any] = json.loads(ok(cli("repair", "--task", TASK, "--json")).stdout)
    return report


def snapshot(store: GraphStore) -> dict[str, Any]:
    key = task_key(TASK)
    runs = [row["props"] for row in store.run("list_runs", {"task_key": key})]
    return {
        "task": {k: v for k, v in store.run("get_task", {"task_key": key})[0]["props"].items()
                 if not k.startswith("repair_lock") and k != "lock_probe"},
        "nodes": sorted((r["props"] for r in store.run("list_task_nodes", {"task_key": key})),
                        key=lambda p: p["uid"]),
        "edges": sorted((r["label"], r["src"], r["dst"], r["sufficient"])
                        for r in store.run("list_task_edges", {"task_key": key})),
        "runs": runs,
        "marks": {run["run_key"]: sorted((r["id"], r["mark"]) for r in
                                         store.run("list_run_marks", {"run_key": run["run_key"]}))
                  for run in runs},
    }


def labels(store: FalkorDBStore) -> dict[str, set[str]]:
    result = store._graphs["graph"].ro_query(
        "MATCH (n:Node {task_key: $k}) RETURN n.id, labels(n)", {"k": task_key(TASK)})
    return {row[0]: set(row[1]) & DISPOSITION_LABELS for row in result.result_set}


def ids(*values: Any) -> set[str]:
    """The ids of the nodes among query result values (None for an OPTIONAL MATCH miss)."""
    found = set()
    for value in values:   # FalkorDB returns Node objects; the neo4j store, property maps
        props = value if isinstance(value, Mapping) else getattr(value, "properties", None)
        if props:
            found.add(props["id"])
    return found


def test_export_copies_the_task_runs_and_repair(exporter: Cli, server: ServerInfo,
                                                copy_graph: str, falkordb_store: GraphStore,
                                                target: FalkorDBStore) -> None:
    report = repaired(exporter)
    result = export(exporter, server, copy_graph)
    source = snapshot(falkordb_store)
    assert snapshot(target) == source
    assert (result["nodes"], result["edges"], result["runs"]) == (
        len(source["nodes"]), len(source["edges"]), 1)
    assert result["labelled_run"] == report["run_id"]
    on_copy = {**exporter.env, "PROVREPAIR_GRAPH": copy_graph}
    for command in (["show", "--task", TASK, "--json"], ["history", "--task", TASK, "--json"]):
        original = ok(exporter(*command)).stdout
        exporter.env, saved = on_copy, exporter.env
        try:
            assert ok(exporter(*command)).stdout == original   # evaluation included
        finally:
            exporter.env = saved


def test_export_labels_the_latest_run_for_the_browser(exporter: Cli, server: ServerInfo,
                                                      copy_graph: str, target: FalkorDBStore,
                                                      falkordb_store: FalkorDBStore) -> None:
    ok(exporter("ingest", str(EXAMPLE)))
    ok(exporter("plan", "--task", TASK))
    export(exporter, server, copy_graph)
    planned = labels(target)
    assert planned["m_f003"] == {"Faulty", "Affected"}
    assert planned["s_005"] == {"Seed", "Supported", "Replayed", "Affected"}
    assert planned["s_001"] == {"Preserved"} and planned["u_1"] == set()
    report = json.loads(ok(exporter("repair", "--task", TASK, "--json")).stdout)
    result = export(exporter, server, copy_graph)
    assert (result["runs"], result["labelled_run"]) == (2, report["run_id"])
    after = labels(target)
    written = {*report["replayed"].values(), *report["new_memory_ids"]}
    assert {n for n, found in after.items() if found == {"Regenerated"}} == written
    assert after["s_001"] == {"Preserved"}
    assert not any(labels(falkordb_store).values()), "the source is never relabelled"


def test_reexport_converges_and_prunes(exporter: Cli, server: ServerInfo, copy_graph: str,
                                       target: FalkorDBStore) -> None:
    repaired(exporter)
    first = export(exporter, server, copy_graph)
    graph = target._graphs["graph"]
    counts = "MATCH (n) WITH count(n) AS nodes MATCH ()-[r]->() RETURN nodes, count(r)"
    before = graph.ro_query(counts).result_set
    key = task_key(TASK)
    graph.query("CREATE (:Node {uid: $u, task_key: $k, id: 'stray', kind: 'step'})",
                {"u": f"{key}/stray", "k": key})
    graph.query("CREATE (:RepairRun {run_key: $r, task_key: $k, run_id: 'gone', status: 'planned',"
                " created: 1})", {"r": f"{key}/gone", "k": key})
    graph.query("MATCH (n:Node {uid: $u}) SET n:Suspicious", {"u": f"{key}/s_001"})
    again = export(exporter, server, copy_graph)
    assert (again["pruned_nodes"], again["pruned_runs"]) == (1, 1)
    assert graph.ro_query(counts).result_set == before
    assert labels(target)["s_001"] == {"Preserved"}
    third = export(exporter, server, copy_graph)
    assert {k: v for k, v in third.items() if not k.startswith("pruned")} == \
        {k: v for k, v in first.items() if not k.startswith("pruned")}
    assert graph.ro_query(counts).result_set == before


def test_export_replaces_another_recorded_version(exporter: Cli, server: ServerInfo,
                                                  copy_graph: str, tmp_path: Path,
                                                  falkordb_store: GraphStore,
                                                  target: FalkorDBStore) -> None:
    other = example_raw()
    other["trace"][0]["content"] = "another version of this step"
    path = tmp_path / "other.json"
    path.write_text(json.dumps(other))
    saved = exporter.env
    exporter.env = {**saved, "PROVREPAIR_GRAPH": copy_graph}
    ok(exporter("ingest", str(path)))
    exporter.env = saved
    repaired(exporter)
    result = export(exporter, server, copy_graph)
    assert result["replaced_version"] is True
    assert snapshot(target) == snapshot(falkordb_store)


def test_browser_queries_on_the_copy(exporter: Cli, server: ServerInfo, copy_graph: str,
                                     target: FalkorDBStore) -> None:
    report = repaired(exporter)
    export(exporter, server, copy_graph)
    check_browser_queries(target, report)


def check_browser_queries(store: GraphStore, report: dict[str, Any]) -> None:
    plan, task = report["plan"], {"task_id": TASK, **run_params("finished_statuses")}
    reach = store.run("fault_reach", task)
    assert ids(*(r["a"] for r in reach)) == set(plan["affected_ids"]) | set(plan["seeds"].values())
    frontier = store.run("replay_frontier", task)
    assert ids(*(r["v"] for r in frontier)) == set(plan["replay_step_ids"]) | set(
        plan["answer_relevant_ids"])
    assert "s_004" in ids(*(r["p"] for r in frontier if r["frontier"]))   # kept context
    pairs = store.run("repair_before_after", {"task_id": TASK, **run_params("repair_statuses")})
    assert {(next(iter(ids(r["old"]))), next(iter(ids(r["new"])))) for r in pairs} == set(
        report["replayed"].items())
    partition = {next(iter(ids(r["mem"]))): r["partition"]
                 for r in store.run("quarantine_partition", task)}
    assert partition["m_f003"] == "1 deleted (faulty)"
    assert partition[report["new_memory_ids"][0]] == "5 regenerated by a repair"
    evidence = store.run("preserving_evidence", {**task, "node_id": "s_005"})
    assert [(next(iter(ids(r["p"]))), r["independent"], r["n_supported"])
            for r in evidence] == [("s_004", True, True)]
    whole = store.run("task_graph", {"task_id": TASK})
    assert len(ids(*(r["n"] for r in whole))) == 18 + len(report["replayed"]) + len(
        report["new_memory_ids"])


def test_export_errors_never_print_credentials(exporter: Cli, server: ServerInfo,
                                               copy_graph: str) -> None:
    ok(exporter("ingest", str(EXAMPLE)))
    here = f"falkordb://{server.host}:{server.port}"
    source_graph = exporter.env["PROVREPAIR_GRAPH"]
    secret = "s3cret-never-shown"
    cases = [
        (["--task", "nope", "--to", here, "--graph", copy_graph], "TaskNotFound", None),
        (["--task", TASK, "--to", f"bolt://neo4j:{secret}@localhost:7687"], "ConfigError", None),
        (["--task", TASK, "--to", "http://localhost:7474"], "ConfigError", None),
        (["--task", TASK, "--to", here, "--graph", source_graph], "ConfigError", None),
        # the same server under another name is still the source
        (["--task", TASK, "--to", f"falkordb://localhost:{server.port}", "--graph",
          source_graph], "ConfigError", None),
        (["--task", TASK, "--to", "falkordb://localhost"], "ConfigError", None),
        (["--task", TASK, "--to", here, "--graph", copy_graph], "StoreUnavailable", secret),
        (["--task", TASK, "--to", "bolt://localhost:7687"], "ConfigError", ""),
    ]
    for args, error, password in cases:
        env = dict(exporter.env)
        if password is not None:
            env["PROVREPAIR_EXPORT_PASSWORD"] = password
        exporter.env, saved = env, exporter.env
        try:
            done = exporter("export", *args)
        finally:
            exporter.env = saved
        assert (done.returncode, done.stderr.split(":")[0]) == (2, error), (args, done.stderr)
        if error == "StoreUnavailable":  # refused credentials: say which variable to set
            assert "PROVREPAIR_EXPORT_PASSWORD" in done.stderr
        assert secret not in done.stdout + done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.neo4j
@pytest.mark.arcadedb_differs("a second label change on a node under a unique constraint "
                              "(Node.uid) fails with ConstraintValidationFailed, so "
                              "label_latest_run.cypher cannot relabel; Neo4j allows any number")
def test_export_to_neo4j(exporter: Cli, neo4j_store: GraphStore, bolt_server: BoltServer,
                         bolt_database: str) -> None:
    report = repaired(exporter)
    exporter.env.update(PROVREPAIR_EXPORT_USER=bolt_server.user,
                        PROVREPAIR_EXPORT_PASSWORD=bolt_server.password)
    for _ in range(2):
        ok(exporter("export", "--task", TASK, "--to", bolt_server.uri, "--database", bolt_database))
    assert snapshot(neo4j_store)["edges"] and len(snapshot(neo4j_store)["nodes"]) == 26
    check_browser_queries(neo4j_store, report)


@pytest.mark.neo4j
def test_a_bolt_store_is_one_store_under_any_name_of_its_host(
        bolt_server: BoltServer, bolt_database: str, neo4j_store: GraphStore) -> None:
    """What `export` compares to refuse copying a task onto the store it reads from."""
    port = urlsplit(bolt_server.uri).port
    with Neo4jStore(f"bolt://localhost:{port}", bolt_server.user, bolt_server.password,
                    database=bolt_database) as store:
        assert store.identity() == neo4j_store.identity()
    if bolt_server.kind != ARCADEDB:
        return  # a Neo4j test server has one database to give (tests/bolt_server.py)
    other = bolt_server.new_database()  # another database of the same server: another store
    try:
        with Neo4jStore(f"bolt://127.0.0.1:{port}", bolt_server.user, bolt_server.password,
                        database=other) as store:
            assert store.identity() != neo4j_store.identity()
    finally:
        bolt_server.drop_database(other)


@pytest.mark.neo4j
@pytest.mark.arcadedb_differs("no db.info(): a Bolt server is known by its address and port, "
                              "so one database reached at another port is not recognised")
def test_one_database_reached_at_another_address_is_the_same_store(
        bolt_proxy: BoltProxy, bolt_server: BoltServer, bolt_database: str,
        neo4j_store: GraphStore) -> None:
    """A cluster's other member (here: the same server behind a proxy on another port) serves
    the same database: Neo4j's own id of it (db.info) says so, not the address."""
    with Neo4jStore(bolt_proxy.uri, bolt_server.user, bolt_server.password,
                    database=bolt_database) as member:
        assert member.identity() == neo4j_store.identity()
