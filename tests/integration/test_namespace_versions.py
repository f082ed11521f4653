"""A fault across conversations that hold several versions of a record, or write it afresh,
and namespace repairs of faults that reach a conversation one after another, or a
transcript ingested after a run finished (repair/plan/namespace.py, repair/namespace_repair.py;
issue 37). On both engines."""

from __future__ import annotations

import pytest

from provrepair.provenance.errors import TaskConflict
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.keys import task_key
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.namespace_repair import repair_namespace
from provrepair.repair.plan.namespace import plan_from_task, plan_namespace
from tests.integration.test_namespace_rounds import NS, conversation

ANSWER = ("final_answer", ["s_1"], [])


def memory_status(store: GraphStore, task: str) -> dict[str, str | None]:
    return {r["props"]["id"]: r["props"].get("status")
            for r in store.run("list_task_nodes", {"task_key": task_key(task)})
            if r["props"]["kind"] == "memory"}


def test_every_version_a_later_conversation_read_is_seeded(store: GraphStore) -> None:
    # a writes r (the fault); b reads r and updates it to r~2; c's snapshot holds both r and
    # r~2 and answers from r~2; d reads r~2 after c. c's answer and d are reached.
    for case in [
        conversation("a", 0, [("r", "s_1", [])], [("memory_write", [], ["r"]), ANSWER]),
        conversation("b", 1000, [("r", None, []), ("r~2", "s_2", ["r"], "r")],
                     [("memory_read", ["r"], []), ("memory_update", ["s_1"], ["r~2"]), ANSWER]),
        conversation("c", 2000, [("r", None, []), ("r~2", None, [], "r")],
                     [("memory_read", ["r~2"], []), ANSWER]),
        conversation("d", 3000, [("r~2", None, [], "r")], [("memory_read", ["r~2"], []), ANSWER]),
    ]:
        ingest_case(store, case)
    plan, _ = plan_namespace(store, NS, ["r"])
    assert [c.task_id for c in plan.conversations] == ["a", "b", "c", "d"]
    c = plan.conversations[2]
    assert {x.memory_id for x in c.reached_by} == {"r", "r~2"}
    assert [a.task_id for a in plan.affected_answers] == ["a", "b", "c", "d"]
    assert plan_namespace(store, NS, ["r"], speculate=False)[0] == plan


def test_a_fault_written_afresh_by_a_later_conversation_is_followed(store: GraphStore) -> None:
    # a writes r clean; b writes r afresh without reading it (the poisoned version); c reads r.
    for case in [
        conversation("a", 0, [("r", "s_1", [])], [("memory_write", [], ["r"]), ANSWER]),
        conversation("b", 1000, [("r", "s_1", [])], [("memory_write", [], ["r"]), ANSWER]),
        conversation("c", 2000, [("r", None, [])], [("memory_read", ["r"], []), ANSWER]),
    ]:
        ingest_case(store, case)
    # the fault named in its task: that version, and what read it after, not a's clean one
    plan, _ = plan_from_task(store, "b", ["r"])
    assert [(c.task_id, c.plan.delete_memory_ids) for c in plan.conversations] == [
        ("b", ["r"]), ("c", ["r"])]
    assert [a.task_id for a in plan.affected_answers] == ["b", "c"]
    # the agent id named: every line of its versions (a's and b's), c read from b's
    plan, _ = plan_namespace(store, NS, ["r"])
    assert [c.task_id for c in plan.conversations] == ["a", "b", "c"]
    assert [(x.from_task, x.reach) for x in plan.conversations[2].reached_by] == [("b", "fault")]
    assert plan_namespace(store, NS, ["r"], speculate=False)[0] == plan


def test_a_conversation_reached_by_another_fault_is_not_answered_with_an_earlier_repair(
        store: GraphStore) -> None:
    # a derives n1 from x, a2 derives n2 from y; b reads n1 and n2. Repairing x repairs b
    # with n1 handed on; repairing y then reaches b through n2: b's repair for x did not
    # treat n2, so it is not reported as b's repair for y.
    for case in [
        conversation("a", 0, [("x", None, []), ("n1", "s_2", ["x"])],
                     [("memory_read", ["x"], []), ("memory_write", ["s_1"], ["n1"]), ANSWER]),
        conversation("a2", 500, [("y", None, []), ("n2", "s_2", ["y"])],
                     [("memory_read", ["y"], []), ("memory_write", ["s_1"], ["n2"]), ANSWER]),
        conversation("b", 1000, [("n1", None, []), ("n2", None, [])],
                     [("memory_read", ["n1"], []), ("memory_read", ["n2"], []),
                      ("final_answer", ["s_1", "s_2"], [])]),
    ]:
        ingest_case(store, case)
    first = repair_namespace(store, NS, ["x"])
    assert [c.task_id for c in first.conversations] == ["a", "b"]  # partial: no derivations
    with pytest.raises(TaskConflict, match=r"task 'b' is already repaired .* inherited "
                                           r"records n1 \(from a\), not .* n2 \(from a2\)"):
        repair_namespace(store, NS, ["y"])
    assert memory_status(store, "b")["n2"] == "active"  # nothing claimed b was repaired for y


def test_a_transcript_ingested_after_a_finished_run_gets_a_follow_up_run(
        store: GraphStore) -> None:
    # a derives n1 from x, b reads n1; the run for x finishes. Then c's transcript (it read
    # n1 at 1500, before the repair) is ingested: the same command plans again and repairs
    # c in a follow-up run, with n1 as a's repair removed it; a and b are not repaired again.
    for case in [
        conversation("a", 0, [("x", None, []), ("n1", "s_2", ["x"])],
                     [("memory_read", ["x"], []), ("memory_write", ["s_1"], ["n1"]), ANSWER]),
        conversation("b", 1000, [("n1", None, [])], [("memory_read", ["n1"], []), ANSWER]),
    ]:
        ingest_case(store, case)
    first = repair_namespace(store, NS, ["x"])
    assert [c.task_id for c in first.conversations] == ["a", "b"]
    assert repair_namespace(store, NS, ["x"]).status == "already_repaired"
    ingest_case(store, conversation("c", 1500, [("n1", None, [])],
                                    [("memory_read", ["n1"], []), ANSWER]))
    follow = repair_namespace(store, NS, ["x"])
    assert follow.run_id != first.run_id and follow.status != "already_repaired"
    outcomes = {c.task_id: c for c in follow.conversations}
    assert list(outcomes) == ["a", "b", "c"]
    assert {t: outcomes[t].run_id for t in "ab"} == {c.task_id: c.run_id
                                                      for c in first.conversations}
    assert outcomes["c"].run_id is not None and outcomes["c"].answer_affected
    assert memory_status(store, "c")["n1"] == "quarantined"
    again = repair_namespace(store, NS, ["x"])
    assert (again.run_id, again.status) == (follow.run_id, "already_repaired")
