"""The namespace plan in rounds (repair/plan/namespace.py "Rounds") and the lockstep that makes
a round's plans at once (repair/plan/lockstep.py), on both engines: the plans are those made
one conversation at a time, whether the guessed seeds were right (a fault read by many
conversations: one round) or wrong (a note derived from the fault, which no guess sees
coming: planned again); each plan of a round is the planner's alone, in far fewer
statements; a failing plan does not hold up the others."""

from __future__ import annotations

import threading
from typing import Any

from provrepair.benchmark.namespace_cases import wide_history
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.keys import task_key
from provrepair.provenance.models import FORMAT
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from provrepair.repair.plan import compute_plan
from provrepair.repair.plan.lockstep import Lockstep
from provrepair.repair.plan.namespace import plan_namespace

NS = "rounds"


def conversation(task: str, start: int, memories: list[tuple[Any, ...]],
                 steps: list[tuple[str, list[str], list[str]]], namespace: str = NS,
                 contents: dict[str, str] | None = None) -> Any:
    """A conversation of `namespace`: memories (id, the step that wrote it or None if read
    from the store, what it derives from[, the agent id it is a version of]), steps (type,
    used ids, generated ids), the last an answer; a memory's content is `record <id>`
    unless `contents` says (the version it is, across conversations)."""
    return parse_case({
        "format": FORMAT, "task_id": task, "domain": "namespace", "memory_namespace": namespace,
        "diagnosed_faults": [],
        "session": [{"input_id": "u_1", "task_id": task, "turn": 1, "content": "question",
                     "timestamp": start + 1}],
        "memory_store": [{
            "memory_id": m, "task_id": task, "status": "active",
            "content": (contents or {}).get(m, f"record {m}"),
            "source": "agent_summary" if by else "injected", "last_modified_by": by,
            "created_at": start, "last_modified_at": start, "derived_from": derived,
            "supersedes": None, "trust_score": None, "fact_key": None, "fact_value": None,
            "entity_id": None, "sufficient_from": [], **({"record_id": rid[0]} if rid else {})}
            for m, by, derived, *rid in memories],
        "trace": [{
            "step_id": f"s_{i}", "task_id": task, "step_type": kind, "content": kind,
            "prev_step_ids": [f"s_{i - 1}"] if i > 1 else [],
            "next_step_ids": [f"s_{i + 1}"] if i < len(steps) else [],
            "invalidated_memory_ids": [], "generated_memory_ids": generated,
            "used_ids": used, "sufficient_ids": [], "timestamp": start + 1 + i, "turn": 1}
            for i, (kind, used, generated) in enumerate(steps, 1)]})


def test_a_note_no_guess_foresaw_is_planned_again_to_the_same_plan(store: GraphStore) -> None:
    # a: holds the fault and writes a note from it; b: reads both; c: reads only the note.
    # The first round guesses b's seeds from a's (the fault, read as it is), not the note a
    # plan of a hands on: b is planned again with it, and c beside it, a's plan handing the
    # note to both (one at a time: a, b, c in three rounds).
    for case in [
        conversation("a", 0, [("m_fault", None, []), ("n_1", "s_2", ["m_fault"])],
                     [("memory_read", ["m_fault"], []), ("memory_write", ["s_1"], ["n_1"]),
                      ("final_answer", ["s_1"], [])]),
        conversation("b", 1000, [("m_fault", None, []), ("n_1", None, [])],
                     [("memory_read", ["m_fault", "n_1"], []), ("final_answer", ["s_1"], [])]),
        conversation("c", 2000, [("n_1", None, [])],
                     [("memory_read", ["n_1"], []), ("final_answer", ["s_1"], [])]),
    ]:
        ingest_case(store, case)
    plan, trace = plan_namespace(store, NS, ["m_fault"])
    one_by_one, alone = plan_namespace(store, NS, ["m_fault"], speculate=False)
    assert plan == one_by_one
    assert [c.task_id for c in plan.conversations] == ["a", "b", "c"]
    b, c = plan.conversations[1:]
    assert [(x.record_id, x.reach) for x in b.reached_by] == [("m_fault", "fault"),
                                                            ("n_1", "removed")]
    # c read the note as a wrote it: handed on by a, the writer
    assert [(x.from_task, x.record_id, x.reach) for x in c.reached_by] == [("a", "n_1", "removed")]
    assert [a.task_id for a in plan.affected_answers] == ["a", "b", "c"]
    assert (trace.rounds, trace.plans_made) == (2, 4)  # b planned on the guess, then again
    assert (alone.rounds, alone.plans_made) == (3, 3)


def test_a_fault_read_by_many_conversations_is_planned_in_one_round(store: GraphStore) -> None:
    history = wide_history(13, 6, 6, namespace=NS, prefix="w")
    for case in history.cases:
        ingest_case(store, case)
    plan, trace = plan_namespace(store, NS, history.faults)
    one_by_one, alone = plan_namespace(store, NS, history.faults, speculate=False)
    assert plan == one_by_one
    assert len(plan.conversations) == 6 and len(plan.affected_answers) == 6
    assert (trace.rounds, trace.plans_made) == (1, 6)
    assert (alone.rounds, alone.plans_made) == (6, 6)

    # The lockstep itself: each plan is the one made alone, its statements merged.
    tasks = [c.task_id for c in plan.conversations]
    lockstep = Lockstep(store)
    merged = lockstep.run_all([
        lambda st, t=t: compute_plan(st, t, ["m_planted"], echo=False)[0] for t in tasks])
    assert merged == [compute_plan(store, t, ["m_planted"], echo=False)[0] for t in tasks]
    one_plan = compute_plan(store, tasks[0], ["m_planted"], echo=False)[1].view.round_trips
    assert lockstep.flushes <= one_plan + 1 and lockstep.statements < 3 * one_plan

    def failing(st: GraphStore) -> None:  # fails after its first read, the others mid-plan
        st.run("get_task", {"task_key": task_key(tasks[0])})
        raise ValueError("a bug in one job")

    outcome: list[BaseException | list[Any]] = []

    def run_all() -> None:
        try:
            outcome.append(Lockstep(store).run_all([
                failing, *(lambda st, t=t: compute_plan(st, t, ["m_planted"], echo=False)
                           for t in tasks)]))
        except BaseException as exc:
            outcome.append(exc)

    caller = threading.Thread(target=run_all, daemon=True)
    caller.start()
    caller.join(120)  # the others go on without it: no plan waits forever
    assert not caller.is_alive()
    assert isinstance(outcome[0], ValueError) and str(outcome[0]) == "a bug in one job"
