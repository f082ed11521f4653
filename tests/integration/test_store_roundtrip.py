"""Ingest → graph → read back, on both engines: exact round trip, idempotency, replace."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from provrepair.benchmark.random_cases import random_case
from provrepair.provenance.edges import derive_edges
from provrepair.provenance.errors import StoreError, StoreUnavailable, TaskConflict, TaskNotFound
from provrepair.provenance.ingest import content_hash, ingest_case, list_tasks, staged_statements
from provrepair.provenance.keys import task_key
from provrepair.provenance.readback import get_task_props, read_case
from provrepair.provenance.store.base import BATCH_ROWS, GraphStore, Statement
from provrepair.provenance.validate import parse_case
from tests.helpers import canonical, example_case, example_raw, retask

HOSTILE_IDS = ['q"uote', "back`tick`", "back\\slash\\", "new\nline", "ünï€😀",
               "MATCH (n) DETACH DELETE n", "x' }) DETACH DELETE n //", "$param",
               " leading", "trailing ", "", "\x01ctl", "%41", "a/b", "~!"]


def graph_snapshot(store: GraphStore, task_id: str) -> tuple[list[dict], list[tuple]]:
    """Everything stored for a task: node properties and edges, order-independent."""
    nodes = sorted((r["props"] for r in store.run("list_task_nodes", {"task_key": task_key(task_id)})),
                   key=lambda p: p["uid"])
    edges = sorted((r["label"], r["src"], r["dst"], r["sufficient"])
                   for r in store.run("list_task_edges", {"task_key": task_key(task_id)}))
    return nodes, edges


def test_round_trip_is_exact(store: GraphStore) -> None:
    case = example_case()
    assert ingest_case(store, case).status == "created"
    assert canonical(read_case(store, case.task_id)) == canonical(case)


def test_graph_holds_derived_edges_exactly(store: GraphStore) -> None:
    case = example_case()
    ingest_case(store, case)
    _, edges = graph_snapshot(store, case.task_id)
    expected = sorted((e.label.value, e.src, e.dst, e.sufficient) for e in derive_edges(case))
    assert edges == expected


def test_reingest_is_idempotent(store: GraphStore) -> None:
    case = example_case()
    ingest_case(store, case)
    before = graph_snapshot(store, case.task_id)
    assert ingest_case(store, case).status == "unchanged"
    assert ingest_case(store, case, replace=True).status == "replaced"
    assert graph_snapshot(store, case.task_id) == before


def test_changed_case_needs_replace_and_replace_swaps(store: GraphStore) -> None:
    case = example_case()
    ingest_case(store, case)
    raw = example_raw()
    raw["trace"][0]["content"] = "a different first step"
    changed = parse_case(raw)
    with pytest.raises(TaskConflict, match="--replace"):
        ingest_case(store, changed)
    assert canonical(read_case(store, case.task_id)) == canonical(case)
    ingest_case(store, changed, replace=True)
    assert canonical(read_case(store, case.task_id)) == canonical(changed)
    assert [t["task_id"] for t in list_tasks(store)] == [case.task_id]


def test_replace_that_dies_before_the_swap_keeps_the_old_version(store: GraphStore) -> None:
    """Simulate a crash after the staged writes: the old version must still read back whole."""
    case = example_case()
    ingest_case(store, case)
    raw = example_raw()
    raw["session"][0]["content"] = "version two"
    changed = parse_case(raw)

    class Crash(Exception):
        pass

    real_run = store.run

    def crashing_run(name: str, params: dict | None = None) -> list[dict]:
        if name == "swap_staged_task":
            raise Crash
        return real_run(name, params)

    store.run = crashing_run  # type: ignore[method-assign]
    with pytest.raises(Crash):
        ingest_case(store, changed, replace=True)
    store.run = real_run  # type: ignore[method-assign]
    assert canonical(read_case(store, case.task_id)) == canonical(case)
    assert [t["task_id"] for t in list_tasks(store)] == [case.task_id]
    ingest_case(store, changed, replace=True)  # the next run completes it
    assert canonical(read_case(store, case.task_id)) == canonical(changed)


def test_evaluation_lives_apart_from_the_planner_graph(store: GraphStore) -> None:
    case = example_case()
    ingest_case(store, case)
    nodes, _ = graph_snapshot(store, case.task_id)
    stored_text = repr(nodes) + repr(store.run("get_task", {"task_key": task_key(case.task_id)}))
    assert "fault_type" not in stored_text and "poisoned" not in stored_text
    assert case.evaluation is not None
    assert case.evaluation.expected_answer not in stored_text
    assert read_case(store, case.task_id).evaluation == case.evaluation
    assert read_case(store, case.task_id, with_evaluation=False).evaluation is None


@pytest.mark.parametrize("hostile", HOSTILE_IDS)
def test_hostile_ids_round_trip_verbatim(store: GraphStore, hostile: str) -> None:
    raw = retask(example_raw(), f"task {hostile}")
    raw["session"][0]["content"] = f"content {hostile}"
    # rename memory m_004 (benign, unreferenced by steps) to the hostile id
    raw["memory_store"][1]["memory_id"] = hostile
    case = parse_case(raw)
    other = example_case("bystander")
    ingest_case(store, other)
    ingest_case(store, case)
    assert canonical(read_case(store, case.task_id)) == canonical(case)
    assert canonical(read_case(store, "bystander")) == canonical(other)


def test_ids_differing_only_in_white_space_stay_distinct(store: GraphStore) -> None:
    raw = example_raw()
    raw["memory_store"][1]["memory_id"] = "m"
    raw["memory_store"][2]["memory_id"] = "m "
    raw["memory_store"][3]["memory_id"] = " m"
    case = parse_case(raw)
    ingest_case(store, case)
    ids = {m.memory_id for m in read_case(store, case.task_id).memory_store}
    assert {"m", "m ", " m"} <= ids


def test_unknown_task_is_a_user_error(store: GraphStore) -> None:
    with pytest.raises(TaskNotFound, match="nope"):
        read_case(store, "nope")


def test_floats_round_trip_exactly(store: GraphStore) -> None:
    """The engines print doubles with 15 digits; a trust score must read back as written."""
    raw = example_raw()
    scores = [0.30000000000000004, 1e-300, 2.5e17 + 1.0, -0.1]
    for memory, score in zip(raw["memory_store"], scores, strict=False):
        memory["trust_score"] = score
    raw["world"]["x"] = 0.1 + 0.2
    case = parse_case(raw)
    ingest_case(store, case)
    back = read_case(store, case.task_id)
    assert [m.trust_score for m in back.memory_store[:4]] == scores
    assert back.world["x"] == 0.30000000000000004


@pytest.mark.parametrize("kind", ["node", "edge"])
def test_a_batch_sent_twice_is_refused_before_the_swap(store: GraphStore, kind: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Staged writes are CREATEs: a batch the client re-sends after a lost reply (redis-py
    retries on connection errors) must not reach the live task. The batch really runs twice
    on the real engine; the count check (Neo4j: also the uid constraint) refuses the copy."""
    case = example_case()
    ingest_case(store, case)
    before = graph_snapshot(store, case.task_id)
    raw = example_raw()
    raw["trace"][0]["content"] = "a different first step"
    changed = parse_case(raw)
    names = [name for name, _ in staged_statements("~probe", changed, derive_edges(changed))]
    resent = next(n for n in names if n.startswith("create_staged_edges_") == (kind == "edge"))
    run_each = store.run_each  # ingest sends its write batches through run_each

    def sent_twice(statements: Iterable[Statement], done: Any = None) -> None:
        def doubled() -> Iterator[Statement]:
            for name, params in statements:
                yield name, params
                if name == resent:
                    yield name, params
        run_each(doubled(), done)

    monkeypatch.setattr(store, "run_each", sent_twice)
    with pytest.raises((StoreUnavailable, StoreError)):
        ingest_case(store, changed, replace=True)
    monkeypatch.undo()
    assert graph_snapshot(store, case.task_id) == before
    assert ingest_case(store, changed, replace=True).status == "replaced"  # a re-run completes
    assert canonical(read_case(store, case.task_id)) == canonical(changed)


def test_a_case_of_many_batches_round_trips_with_its_content_hash(store: GraphStore) -> None:
    """Several full batches per group (BATCH_ROWS), streamed group by group while the
    content hash is fed between them: read back exactly, the stored hash is the case's."""
    case = random_case(3, n_steps=BATCH_ROWS + 1500)
    edges = derive_edges(case)
    assert len(edges) > 2 * BATCH_ROWS
    assert ingest_case(store, case).status == "created"
    assert canonical(read_case(store, case.task_id)) == canonical(case)
    assert get_task_props(store, case.task_id)["content_hash"] == content_hash(case)
    assert ingest_case(store, case).status == "unchanged"
    _, stored = graph_snapshot(store, case.task_id)
    assert len(stored) == len(edges)
