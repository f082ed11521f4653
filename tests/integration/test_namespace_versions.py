"""A fault across conversations that hold several versions of a record, or write it afresh,
and namespace repairs of faults that reach a conversation one after another, or a
transcript ingested after a run finished (repair/plan/namespace.py, repair/namespace_repair.py;
issue 37). On both engines."""

from __future__ import annotations

from typing import Any

import pytest

from provrepair.provenance.errors import TaskConflict
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.keys import task_key
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.vocab import MemoryStatus
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
    # a writes r clean; b writes r afresh without reading it (the poisoned version); c reads r
    # as b wrote it.
    for case in [
        conversation("a", 0, [("r", "s_1", [])], [("memory_write", [], ["r"]), ANSWER],
                     contents={"r": "home city: Lisbon"}),
        conversation("b", 1000, [("r", "s_1", [])], [("memory_write", [], ["r"]), ANSWER],
                     contents={"r": "home city: Lyon"}),
        conversation("c", 2000, [("r", None, [])], [("memory_read", ["r"], []), ANSWER],
                     contents={"r": "home city: Lyon"}),
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


# -- which version a conversation read: its content, not its place in time ----------------

CLEAN, POISONED, FRESH = "home city: Lisbon", "home city: Lyon", "home city: Porto"


def note_from_fault(task: str, start: int, contents: dict[str, str] | None = None) -> Any:
    """`task` reads the fault x and writes the note n from it (n's content: `contents`)."""
    return conversation(task, start, [("x", None, []), ("n", "s_2", ["x"])],
                        [("memory_read", ["x"], []), ("memory_write", ["s_1"], ["n"]), ANSWER],
                        contents={"x": POISONED, "n": "note from Lyon", **(contents or {})})


def reader(task: str, start: int, content: str) -> Any:
    """`task` reads the note n (as `content`) and answers from it."""
    return conversation(task, start, [("n", None, [])], [("memory_read", ["n"], []), ANSWER],
                        contents={"n": content})


def rewriter(task: str, start: int, content: str) -> Any:
    """`task` writes the note n afresh, from nothing it read."""
    return conversation(task, start, [("n", "s_1", [])], [("memory_write", [], ["n"]), ANSWER],
                        contents={"n": content})


def reached(store: GraphStore, faults: list[str]) -> dict[str, list[tuple[str | None, str]]]:
    plan, _ = plan_namespace(store, NS, faults)
    assert plan_namespace(store, NS, faults, speculate=False)[0] == plan
    return {c.task_id: [(x.from_task, x.memory_id) for x in c.reached_by]
            for c in plan.conversations}


def test_a_stale_snapshot_is_reached_past_a_fresh_rewrite(store: GraphStore) -> None:
    # a derives n from the fault; b rewrites n afresh (clean); c's snapshot was taken before
    # b's write and holds a's n; d reads b's n. c is reached, d is not.
    for case in [note_from_fault("a", 0), rewriter("b", 1000, FRESH),
                 reader("c", 1500, "note from Lyon"), reader("d", 2000, FRESH)]:
        ingest_case(store, case)
    assert reached(store, ["x"]) == {"a": [(None, "x")], "c": [("a", "n")]}


def test_a_conversation_that_started_before_the_writer_is_reached(store: GraphStore) -> None:
    # c started first and read n after a (which started later, running at once) wrote it
    # from the fault: c is reached, from a, though planned before it.
    for case in [note_from_fault("a", 1000), reader("c", 500, "note from Lyon")]:
        ingest_case(store, case)
    plan, trace = plan_namespace(store, NS, ["x"])
    assert [c.task_id for c in plan.conversations] == ["c", "a"]  # time order
    assert [(x.from_task, x.reach) for x in plan.conversations[0].reached_by] == [
        ("a", "removed")]
    assert [a.task_id for a in plan.affected_answers] == ["c", "a"]
    assert trace.walks == 2
    assert reached(store, ["x"]) == {"c": [("a", "n")], "a": [(None, "x")]}


def test_what_an_early_conversation_hands_back_reaches_on(store: GraphStore) -> None:
    # a (started at 1000) derives n from the fault; c (at 500) read n and derived m from
    # it; d (at 2000) reads m. The chain goes back in time and forward again.
    for case in [
        note_from_fault("a", 1000),
        conversation("c", 500, [("n", None, []), ("m", "s_2", ["n"])],
                     [("memory_read", ["n"], []), ("memory_write", ["s_1"], ["m"]), ANSWER],
                     contents={"n": "note from Lyon"}),
        conversation("d", 2000, [("m", None, [])], [("memory_read", ["m"], []), ANSWER]),
    ]:
        ingest_case(store, case)
    assert reached(store, ["x"]) == {"c": [("a", "n")], "a": [(None, "x")], "d": [("c", "m")]}


def test_a_copy_no_other_conversation_holds_may_be_any_earlier_version(
        store: GraphStore) -> None:
    # c read n as a recording of its own wrote it (no other conversation holds that
    # content): it is reached from the earlier a; b, earlier than a, is not.
    for case in [note_from_fault("a", 1000), reader("b", 500, "Note From Lyon"),
                 reader("c", 2000, "note from Lyon (as c's recording wrote it)")]:
        ingest_case(store, case)
    assert reached(store, ["x"]) == {"a": [(None, "x")], "c": [("a", "n")]}


def test_two_versions_with_one_content_are_both_handed_on(store: GraphStore) -> None:
    # a derives n from the fault; b writes the same text afresh; c read that text: which
    # one it read cannot be told, so a's reaches it; and b's own copy (b's later reads of
    # it may have returned a's: the same text)
    for case in [note_from_fault("a", 0), rewriter("b", 1000, "note from Lyon"),
                 reader("c", 2000, "note from Lyon")]:
        ingest_case(store, case)
    assert reached(store, ["x"]) == {"a": [(None, "x")], "b": [("a", "n")], "c": [("a", "n")]}


def test_a_copy_rendered_its_own_way_is_reached_from_a_writer_that_started_later(
        store: GraphStore) -> None:
    # c was asked at 500 and read the note at 1501, after a (started at 1000) wrote it; its
    # recording renders the note unlike a's, so which version it read cannot be told: a's
    # is one it may be.
    asked = reader("c", 500, "{'note': 'from Lyon'}")
    late = asked.model_copy(update={"trace": [s.model_copy(update={"timestamp": s.timestamp + 1000})
                                              for s in asked.trace]})
    for case in [note_from_fault("a", 1000), late]:
        ingest_case(store, case)
    assert reached(store, ["x"]) == {"c": [("a", "n")], "a": [(None, "x")]}


def test_a_conversation_over_before_the_writer_started_is_not_reached(
        store: GraphStore) -> None:
    # b (500..503) ended before a started (1000): whatever version its copy is, not a's.
    for case in [note_from_fault("a", 1000), reader("b", 500, "a note b's recording wrote")]:
        ingest_case(store, case)
    assert reached(store, ["x"]) == {"a": [(None, "x")]}


def test_a_fault_saved_again_as_it_was_read_is_seeded_where_it_was_first_read(
        store: GraphStore) -> None:
    # the fault r was in the store before the recordings; q read it first, p read it and
    # saved it again unchanged (an update derived from its read): p did not make that
    # version, so it is seeded where it was first read, and reaches p from there.
    for case in [
        conversation("q", 0, [("r", None, [])], [("memory_read", ["r"], []), ANSWER],
                     contents={"r": POISONED}),
        conversation("p", 1000, [("r", None, []), ("r~2", "s_2", ["r"], "r")],
                     [("memory_read", ["r"], []), ("memory_update", ["s_1"], ["r~2"]), ANSWER],
                     contents={"r": POISONED, "r~2": POISONED}),
    ]:
        ingest_case(store, case)
    assert reached(store, ["r"]) == {"q": [(None, "r")], "p": [("q", "r")]}


def test_a_version_written_with_the_text_of_another_writers_is_handed_to_it(
        store: GraphStore) -> None:
    # r wrote n itself; a wrote the same text from the fault; r's later read of n (which
    # its recording took for its own version: the same text) may be a's: r is reached
    for case in [
        conversation("r", 0, [("n", "s_1", []), ("m", "s_3", ["n"])],
                     [("memory_write", [], ["n"]), ("memory_read", ["n"], []),
                      ("memory_write", ["s_2"], ["m"]), ANSWER],
                     contents={"n": "note from Lyon"}),
        note_from_fault("a", 1000),
    ]:
        ingest_case(store, case)
    assert reached(store, ["x"])["r"] == [("a", "n")]


def test_structured_content_is_one_version_whatever_the_key_order(store: GraphStore) -> None:
    # a's recording wrote the note as JSON, c's recording read it with keys in another order
    for case in [note_from_fault("a", 0, {"n": '{"city": "Lyon", "kind": "note"}'}),
                 reader("c", 1000, '{"kind":"note","city":"Lyon"}')]:
        ingest_case(store, case)
    assert reached(store, ["x"]) == {"a": [(None, "x")], "c": [("a", "n")]}


def test_a_note_saved_again_from_a_contaminated_copy_is_quarantined(store: GraphStore) -> None:
    # a derives n from the fault and updates it (its n superseded: handed on as affected);
    # b read a's n and saved it again unchanged (n~3, the same text as a's n): b's own rules
    # quarantine n~3 (derived from a contaminated copy), whatever a handed its text on as.
    a = conversation("a", 0, [("x", None, []), ("n", "s_2", ["x"]), ("n~2", "s_3", ["n"], "n")],
                     [("memory_read", ["x"], []), ("memory_write", ["s_1"], ["n"]),
                      ("memory_update", ["s_2"], ["n~2"]), ANSWER],
                     contents={"x": POISONED, "n": "note from Lyon", "n~2": "note v2"})
    a = a.model_copy(update={"memory_store": [
        m.model_copy(update={"status": MemoryStatus.SUPERSEDED}) if m.memory_id == "n" else m
        for m in a.memory_store]})
    b = conversation("b", 1000, [("n", None, []), ("n~3", "s_2", ["n"], "n")],
                     [("memory_read", ["n"], []), ("memory_update", ["s_1"], ["n~3"]), ANSWER],
                     contents={"n": "note from Lyon", "n~3": "note from Lyon"})
    for case in [a, b]:
        ingest_case(store, case)
    plan, _ = plan_namespace(store, NS, ["x"])
    assert next(c for c in plan.conversations if c.task_id == "b").plan.quarantine_memory_ids \
        == ["n~3"]


def test_a_version_written_before_the_writer_read_the_record_starts_a_line(
        store: GraphStore) -> None:
    # r wrote n (the fault) before it read anything of it, then read w's later text; q read
    # r's n and built m on it: r's write still starts a line, and q is reached from it.
    for case in [
        conversation("r", 0, [("n", "s_1", []), ("n~2", None, [], "n")],
                     [("memory_write", [], ["n"]), ("memory_read", ["n~2"], []), ANSWER],
                     contents={"n": POISONED, "n~2": FRESH}),
        conversation("q", 1000, [("n", None, []), ("m", "s_2", ["n"])],
                     [("memory_read", ["n"], []), ("memory_write", ["s_1"], ["m"]), ANSWER],
                     contents={"n": POISONED}),
        conversation("w", 2000, [("n", "s_1", [])], [("memory_write", [], ["n"]), ANSWER],
                     contents={"n": FRESH}),
    ]:
        ingest_case(store, case)
    assert ("r", "n") in reached(store, ["n"])["q"]


def test_a_fault_written_back_after_another_version_is_seeded_where_first_read(
        store: GraphStore) -> None:
    # x (the fault, "Lyon") was in the store before; a read it and wrote n from it; c
    # updated x to "Porto"; d updated it back to "Lyon" (after reading "Porto"): d's write
    # starts no line, so the version is seeded where it was first read, at a.
    for case in [
        conversation("a", 0, [("x", None, []), ("n", "s_2", ["x"])],
                     [("memory_read", ["x"], []), ("memory_write", ["s_1"], ["n"]), ANSWER],
                     contents={"x": POISONED, "n": "note from Lyon"}),
        conversation("c", 1000, [("x", None, []), ("x~2", "s_2", ["x"], "x")],
                     [("memory_read", ["x"], []), ("memory_update", ["s_1"], ["x~2"]), ANSWER],
                     contents={"x": POISONED, "x~2": FRESH}),
        conversation("d", 2000, [("x~2", None, [], "x"), ("x~3", "s_2", ["x~2"], "x")],
                     [("memory_read", ["x~2"], []), ("memory_update", ["s_1"], ["x~3"]), ANSWER],
                     contents={"x~2": FRESH, "x~3": POISONED}),
    ]:
        ingest_case(store, case)
    assert set(reached(store, ["x"])) == {"a", "c", "d"}


def test_a_record_handed_as_removed_then_as_a_fault_is_only_deleted(store: GraphStore) -> None:
    # a read n and updated it from the fault x (its n~1 quarantined: handed on as removed);
    # b wrote n's same text afresh (a line of the faulty record n); c read that text: it is
    # handed n as removed by a, then as a fault by b, and deletes it (a fault replaces what
    # was handed before: never deleted and quarantined at once).
    for case in [
        conversation("a", 0, [("x", None, []), ("n", None, []), ("n~1", "s_3", ["x"], "n")],
                     [("memory_read", ["x"], []), ("memory_read", ["n"], []),
                      ("memory_update", ["s_1"], ["n~1"]), ANSWER],
                     contents={"x": POISONED, "n": "old note", "n~1": "note from Lyon"}),
        rewriter("b", 500, "note from Lyon"), reader("c", 1000, "note from Lyon")]:
        ingest_case(store, case)
    plan, _ = plan_namespace(store, NS, ["x", "n"])
    c = next(c for c in plan.conversations if c.task_id == "c")
    assert (c.plan.delete_memory_ids, c.plan.quarantine_memory_ids) == (["n"], [])


def test_a_version_written_afresh_before_a_stale_read_starts_a_line(store: GraphStore) -> None:
    # c wrote n afresh (from nothing it read), cited it, then read n from a stale snapshot
    # (a's earlier version: its copy carries that version's time, earlier than c's write);
    # d read c's version. c's write starts a line: c's claim and d are reached.
    c = conversation("c", 1000, [("n", None, []), ("n~w", "s_1", [], "n")],
                     [("memory_write", [], ["n~w"]), ("claim", ["n~w"], []),
                      ("memory_read", ["n"], []), ("final_answer", ["s_2", "s_3"], [])],
                     contents={"n": CLEAN, "n~w": POISONED})
    c = c.model_copy(update={"memory_store": [
        m.model_copy(update={"created_at": 2, "last_modified_at": 2}) if m.memory_id == "n"
        else m for m in c.memory_store]})
    for case in [rewriter("a", 0, CLEAN), c, reader("d", 2000, POISONED)]:
        ingest_case(store, case)
    plan, _ = plan_namespace(store, NS, ["n"])
    by_task = {x.task_id: x for x in plan.conversations}
    assert {"s_2", "s_4"} <= set(by_task["c"].plan.affected_ids)
    assert "d" in by_task and by_task["d"].answer_affected
