"""A user's history over one memory (benchmark/namespace_cases.py `user_history`): the planted
record is followed into every later conversation that read it or a note derived from it; the
namespace repair, on both engines, corrects exactly the answers a clean history gives, and
its patch is one operation per record of the shared store."""

from __future__ import annotations

import pytest

from provrepair.benchmark.namespace_cases import UserHistory, user_history
from provrepair.provenance.errors import ConfigError, RecordNotFound
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.namespace_patch import namespace_patch
from provrepair.repair.namespace_repair import list_namespace_runs, repair_namespace
from provrepair.repair.plan.namespace import plan_from_task, plan_namespace
from provrepair.repair.reasoners import make_reasoner
from provrepair.repair.runs import list_runs
from provrepair.view.namespace import namespace_view_data

NS = "user-7"


def stored(store: GraphStore) -> UserHistory:
    history = user_history(6, 3, seed=3, namespace=NS, prefix="s")
    for case in history.cases:
        ingest_case(store, case)
    return history


def test_a_namespace_repair_corrects_every_answer_the_fault_reached(store: GraphStore) -> None:
    history = stored(store)
    assert history.affected  # the generated history does reach later conversations
    plan, _ = plan_namespace(store, NS, [history.fault])
    assert [a.task_id for a in plan.affected_answers] == history.affected
    assert plan.conversations_in_namespace == 6
    assert plan.conversations[0].task_id == history.fault_session
    by_task, _ = plan_from_task(store, history.fault_session, ["m_planted"])
    assert by_task == plan  # the same plan, asked from the conversation holding the fault

    report = repair_namespace(store, NS, [history.fault], "offline")  # a name, as run_repair
    assert report.status == "repaired"
    assert {c.task_id: c.corrected_answer for c in report.conversations} == {
        c.task_id: history.clean_answers[c.task_id] for c in plan.conversations}
    for c in report.conversations:  # each conversation's repair is a run in its history
        assert [r["run_id"] for r in list_runs(store, c.task_id)
                if r["status"] == "repaired"] == [c.run_id]

    patch = namespace_patch(store, NS)
    ids = [op.memory_id for op in patch.operations]
    assert len(ids) == len(set(ids)) and not set(ids) & set(patch.kept_ids)
    assert ("delete", history.fault) in [(op.op, op.memory_id) for op in patch.operations]
    rewritten = {getattr(op, "content", None) for op in patch.operations} - {None}
    assert rewritten and not any("Lyon" in c or "Globex" in c or "keto" in c
                                 for c in rewritten)

    again = repair_namespace(store, NS, [history.fault], make_reasoner("offline", None))
    assert again.status == "already_repaired" and again.run_id == report.run_id
    assert len(list_namespace_runs(store, NS)) == 1


def test_an_unknown_reasoner_name_is_refused_and_leaves_no_run_or_lock(
        falkordb_store: GraphStore) -> None:
    with pytest.raises(ConfigError, match="ofline"):
        repair_namespace(falkordb_store, NS, ["m_planted"], "ofline")
    assert list_namespace_runs(falkordb_store, NS) == []
    with pytest.raises(RecordNotFound):  # no lock left behind: the next call gets to planning
        repair_namespace(falkordb_store, NS, ["m_planted"])


def test_the_namespace_page_groups_the_conversations(falkordb_store: GraphStore) -> None:
    history = stored(falkordb_store)
    plan, _ = plan_namespace(falkordb_store, NS, [history.fault])
    data = namespace_view_data(falkordb_store, plan)
    groups = [n["id"] for n in data["nodes"] if n["kind"] == "conversation"]
    assert groups == [c.task_id for c in plan.conversations]
    members = [n for n in data["nodes"] if n["kind"] != "conversation"]
    assert {n["parent"] for n in members} == set(groups)
    shared = [e for e in data["edges"] if e["label"] == "SHARED_RECORD"]
    ids = {n["id"] for n in data["nodes"]}
    assert shared and all(e["src"] in ids and e["dst"] in ids for e in shared)
    with pytest.raises(RecordNotFound, match="'user-7' holds no record 'm_nope'"):
        plan_namespace(falkordb_store, NS, ["m_nope"])


def test_a_conversation_asked_before_the_one_it_read_from_is_repaired_after_it(
        store: GraphStore) -> None:
    # s_03 writes a note from the fault and s_04 reads it; s_04 was asked (2501) before s_03
    # started (3001), running at once with it. s_04 is listed first (time order) but
    # repaired after s_03, reading the note as s_03's repair rewrote it: its corrected
    # answer is the clean history's.
    history = user_history(6, 2, seed=1, namespace=NS, prefix="s")
    for case in history.cases:
        if case.task_id == "s_04":
            case = case.model_copy(update={"session": [
                u.model_copy(update={"timestamp": 2501}) for u in case.session]})
        ingest_case(store, case)
    plan, _ = plan_namespace(store, NS, [history.fault])
    assert [c.task_id for c in plan.conversations] == ["s_02", "s_04", "s_03", "s_05"]
    report = repair_namespace(store, NS, [history.fault], "offline")
    outcomes = {c.task_id: c for c in report.conversations}
    rewrite = outcomes["s_03"].new_memory_ids  # the note, as s_03's repair rewrote it
    assert len(rewrite) == 1 and outcomes["s_04"].carried == rewrite
    assert {t: c.corrected_answer for t, c in outcomes.items()} == {
        t: history.clean_answers[t] for t in outcomes}
