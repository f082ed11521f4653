"""The store stays readable as the graph's node capacity doubles (16,384 → 32,768 → 65,536).

Regression for FalkorDB 4.16.3 dropping a node deletion from label matrices that lag the
graph's capacity (docs/engines.md, "Deleting nodes"; bench/engine_delete_repro.py): an
`ingest --replace` whose staged copy took the graph past 16,384 nodes left the old `:Task`
record as a stray entry of the label, and every task listing failed after it. Here each
capacity step is crossed by a replace's staging, with repair, replace and delete cycles
around it; after each the store checks clean and every task reads back exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import redis

from provrepair.provenance.check import check_store
from provrepair.provenance.ingest import delete_task, ingest_case, list_tasks
from provrepair.provenance.models import Case
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.embedded import EmbeddedServer, ServerInfo
from provrepair.repair.reasoners.offline import OfflineReasoner
from provrepair.repair.service import repair_task
from tests.conftest import Cli
from tests.helpers import EXAMPLE, canonical, example_case, example_raw, retask

PRIMARY_LABELS = ("Node", "Task", "TaskLock", "RepairRun")  # every node carries exactly one


def sized(task_id: str, inputs: int, version: int = 1) -> Case:
    """The example case with `inputs` more user inputs (cheap nodes: one edge each)."""
    raw = retask(example_raw(), task_id)
    last = raw["session"][-1]
    raw["session"] += [{**last, "input_id": f"pad_{i}", "content": f"padding {i} v{version}",
                        "timestamp": last["timestamp"] + 1 + i} for i in range(inputs)]
    return Case.model_validate(raw)


def nodes(case: Case) -> int:
    return len(case.session) + len(case.memory_store) + len(case.trace)


def stored_nodes(store: GraphStore) -> int:
    return sum(int(row["scanned"]) for row in store.run("scan_labels")
               if row["label"] in PRIMARY_LABELS)


def assert_readable(store: GraphStore, expected: dict[str, Case]) -> None:
    report = check_store(store)
    assert report.clean, report.line()
    assert sorted(row["task_id"] for row in list_tasks(store)) == sorted(expected)


def test_replace_delete_repair_across_three_capacity_steps(falkordb_store: GraphStore) -> None:
    store = falkordb_store
    expected: dict[str, Case] = {}
    anchor = sized("anchor", 6000)  # the task whose replace crosses each step
    ingest_case(store, anchor)
    small_raw = retask(example_raw(), "small")
    seed, version = 10, 1
    for step in (2**14, 2**15, 2**16):
        ingest_case(store, example_case("small"), replace=True)
        assert repair_task(store, "small", OfflineReasoner()).status == "repaired"
        expected["small"] = example_case("small")  # listed; read back before its repairs
        while True:  # fill to just under the step
            filler = sized(f"filler_{seed}", 4000)
            if stored_nodes(store) + nodes(filler) + 8 > step:
                break
            ingest_case(store, filler)
            expected[filler.task_id] = filler
            seed += 1
        assert stored_nodes(store) + nodes(anchor) > step  # the staged copy crosses it
        version += 1
        anchor = sized("anchor", 6000, version)
        assert ingest_case(store, anchor, replace=True).status == "replaced"
        expected["anchor"] = anchor
        assert sorted(row["task_id"] for row in list_tasks(store)) == sorted(expected)
        # the cycles around the new size: a repaired task replaced, then repaired again
        small_raw["session"][0]["content"] += " (again)"
        small = Case.model_validate(small_raw)
        ingest_case(store, small, replace=True)
        assert canonical(read_case(store, "small")) == canonical(small)
        assert repair_task(store, "small", OfflineReasoner()).status == "repaired"
        gone = sorted(t for t in expected if t.startswith("filler_"))[0]
        assert delete_task(store, gone) == nodes(expected.pop(gone))
        assert_readable(store, expected)
    del expected["small"]
    for task_id, case in expected.items():
        assert canonical(read_case(store, task_id)) == canonical(case), task_id


def test_db_check_names_a_stray_label_entry(cli: Cli, server: ServerInfo, server_home: Path,
                                            graph_name: str) -> None:
    # the schema's :Task index: the defect needs a deletion that finds its node through it
    assert cli("db", "migrate").returncode == 0
    assert cli("ingest", str(EXAMPLE)).returncode == 0
    clean = cli("db", "check")
    assert clean.returncode == 0 and clean.stdout.startswith("clean: "), clean.stderr
    client = redis.Redis(port=server.port, password=EmbeddedServer(server_home).password())
    try:
        # the unguarded deletion of bench/engine_delete_repro.py, on this graph's :Task index
        for statement in ["CREATE (:Task {task_key: '~1:a', task_id: 'a'}), "
                          "(:Task {task_key: '~1:b', task_id: 'b'})",
                          "UNWIND range(1, 16384) AS i CREATE (:Other)",
                          "MATCH (t:Task {task_key: '~1:a'}) DELETE t"]:
            client.execute_command("GRAPH.QUERY", graph_name, statement)
        damaged = cli("db", "check")
        assert damaged.returncode == 1, (damaged.stdout, damaged.stderr)
        assert damaged.stdout.startswith("damaged: 1 of ") and ":Task" in damaged.stdout
        assert len(damaged.stdout.strip().splitlines()) == 1
        as_json = json.loads(cli("db", "check", "--json").stdout)
        assert as_json["clean"] is False and ":Task" in as_json["reason"]
    finally:
        client.execute_command("GRAPH.DELETE", graph_name)
        client.close()
