"""Selective replay end to end (docs/method.md §5) on the cases in tests/cases/replay/.

The four case studies of the paper (customer-support summary drift, travel wrong-user with a
contaminated derived summary, shopping poisoned price, LME three-poisoned-memory navigation),
enriched with derivations, facts and recorded tool results so that the OFFLINE reasoner
recovers the paper's corrected answer, and small cases that exercise the replay of each step
type, restoration of superseded records, unresolved steps, early cutoff and side-effecting
tools. Every case is ingested, repaired with `repair_task(..., OfflineReasoner())` and read
back from the store (both engines through the `store` fixture).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.errors import NothingToResume
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.keys import task_key
from provrepair.provenance.models import Case
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from provrepair.repair.reasoners.offline import OfflineReasoner
from provrepair.repair.runs import list_runs
from provrepair.repair.service import RepairReport, repair_task
from provrepair.repair.tools.registry import ToolRegistry

CASES = Path(__file__).resolve().parent.parent / "cases" / "replay"
PLANNER = Path(__file__).resolve().parent.parent / "cases" / "planner"
PLANNER_EXPECTED = {e["file"]: e["expected"]
                    for e in json.loads((PLANNER / "expected.json").read_text())}
ORDERED = {"replay_step_ids", "seeds"}

Edge = tuple[str, str, str]  # (label, src, dst)


# -- helpers ------------------------------------------------------------------------------------

def load(name: str) -> Case:
    return parse_case(json.loads((CASES / name).read_text()))


def ingest(store: GraphStore, name: str) -> Case:
    case = load(name)
    ingest_case(store, case)
    return case


def repair(store: GraphStore, case: Case, **kwargs: Any) -> RepairReport:
    report = repair_task(store, case.task_id, OfflineReasoner(), **kwargs)
    assert_no_id_reused(store, case.task_id)
    return report


def assert_no_id_reused(store: GraphStore, task_id: str) -> None:
    """The write-back invariant (docs/method.md §5, step 5): every id names one node of the
    task, and no record has two producers."""
    ids = [r["id"] for r in store.run("list_task_node_ids", {"task_key": task_key(task_id)})]
    assert len(ids) == len(set(ids)), sorted(i for i in set(ids) if ids.count(i) > 1)
    producers = [dst for label, _, dst in edges(store, task_id) if label == "PRODUCE"]
    assert len(producers) == len(set(producers)), "a record with two PRODUCE edges"


def norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def recovered(answer: str | None, facts: list[str]) -> bool:
    """docs/case-format.md, Evaluation: every required fact, case-insensitive, white space collapsed."""
    return answer is not None and all(norm(f) in norm(answer) for f in facts)


def required_facts(case: Case) -> list[str]:
    assert case.evaluation is not None
    return case.evaluation.required_facts


def faulty_answer(case: Case) -> str:
    """The content of v_final in the failed trace (last final_answer by ts, then position)."""
    finals = [(s.timestamp, i, s.content) for i, s in enumerate(case.trace)
              if s.step_type.value == "final_answer"]
    return max(finals)[2]


def statuses(store: GraphStore, task_id: str) -> dict[str, str]:
    return {m.memory_id: m.status.value for m in read_case(store, task_id).memory_store}


def edges(store: GraphStore, task_id: str) -> set[Edge]:
    rows = store.run("list_task_edges", {"task_key": task_key(task_id)})
    return {(r["label"], r["src"], r["dst"]) for r in rows}


def new_nodes(store: GraphStore, task_id: str) -> dict[str, dict[str, Any]]:
    """Nodes written by a repair run (read_case leaves them out), by id."""
    rows = store.run("list_task_nodes", {"task_key": task_key(task_id)})
    return {r["props"]["id"]: r["props"] for r in rows if "origin_run" in r["props"]}


def snapshot(store: GraphStore, task_id: str) -> tuple[Any, ...]:
    """Everything a repair could write for the task: nodes, edges and runs (not the Task
    record, whose repair-lock bookkeeping a dry run also takes and releases)."""
    rows = store.run("list_task_nodes", {"task_key": task_key(task_id)})
    nodes = sorted(json.dumps(r["props"], sort_keys=True, default=str) for r in rows)
    return nodes, sorted(edges(store, task_id)), list_runs(store, task_id)


def producer_of(case: Case, memory_id: str) -> str:
    return next(s.step_id for s in case.trace if memory_id in s.generated_memory_ids)


def step_facts(props: dict[str, Any]) -> list[dict[str, Any]]:
    facts: list[dict[str, Any]] = json.loads(props.get("facts_json") or "[]")
    return facts


# -- the cases ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class NewMemory:
    memory_id: str
    replaces: str
    content: str
    supersedes: str | None = None
    derived_from: tuple[str, ...] = ()
    status: str | None = "active"       # None: checked by a dedicated test


@dataclass(frozen=True)
class Spec:
    file: str
    replay: list[str]                    # plan.replay_step_ids
    replayed_steps: int
    tool_calls: int = 0
    early_cutoff_steps: int = 0
    early_cutoff: bool = True
    quarantine: list[str] = field(default_factory=list)
    new_memories: tuple[NewMemory, ...] = ()
    restored: tuple[str, ...] = ()
    unresolved: tuple[str, ...] = ()
    statuses: dict[str, str] = field(default_factory=dict)   # further expected end statuses

    @property
    def paper(self) -> bool:
        return self.file.startswith("paper_")


RECOVERING = [
    Spec("paper_customer_support_drift.json", ["s_132", "s_145", "s_146", "s_148"], 4,
         new_memories=(NewMemory(
             "m_n034", "m_f026",
             "Support case summary: ORD00169 shipped; Home refund window 30 days",
             supersedes="m_019", derived_from=("m_019",)),),
         statuses={"m_019": "superseded"}),
    Spec("paper_travel_wrong_user.json", ["s_001", "s_002", "s_007", "s_008", "s_009", "s_010"],
         6, quarantine=["m_008"],
         new_memories=(NewMemory("m_n012", "m_008", "Active flight F0028: ANA, $275.99"),)),
    Spec("paper_shopping_poisoned_price.json",
         ["s_005", "s_007", "s_008", "s_009", "s_010", "s_012"], 6, tool_calls=1,
         new_memories=(NewMemory("m_n007", "m_f003", "P0199 at StoreC: $63.99"),)),
    Spec("paper_lme_navigation.json",
         ["s_042", "s_043", "s_044", "s_045", "s_046", "s_047", "s_049", "s_050"], 8,
         tool_calls=1,
         new_memories=(
             NewMemory("m_n010", "m_f005",
                       "Article-page header action button (new): Attach to Private Task"),
             NewMemory("m_n011", "m_f006", "'Attach to Private Task' is visible near the article "
                       "heading and absent from the search-results context",
                       derived_from=("m_n010",)),
             NewMemory("m_n012", "m_f009",
                       "The new article-page header action label is Attach to Private Task",
                       derived_from=("m_n011",)))),
    Spec("small_memory_read.json", ["s_003", "s_004", "s_005", "s_006"], 4,
         new_memories=(NewMemory("m_n010", "m_f003", "P0199 at StoreC: $63.99"),)),
    Spec("small_plan_tool_action.json", ["s_001", "s_002", "s_003", "s_004", "s_006"], 5,
         tool_calls=1),
    Spec("small_memory_update.json", ["s_002", "s_003", "s_004"], 3,
         new_memories=(NewMemory("m_n004", "m_f003", "Home airport: OAK", supersedes="m_001",
                                 derived_from=("m_001",)),),
         statuses={"m_001": "superseded"}),
    # the same update made in place (the agent's store keeps one id, m_001): the regenerated
    # record is the next version of m_001, never an id the task already has
    Spec("small_memory_update_in_place.json", ["s_002", "s_003", "s_004"], 3,
         new_memories=(NewMemory("m_001~3", "m_001~2", "Home airport: OAK",
                                 supersedes="m_001", derived_from=("m_001",)),),
         statuses={"m_001": "superseded"}),
    Spec("small_restore_deleted.json", ["s_001", "s_002"], 2, restored=("m_001",),
         statuses={"m_001": "active"}),
    Spec("small_restore_quarantined.json", ["s_001", "s_002", "s_003"], 3,
         quarantine=["m_003"], restored=("m_001",), unresolved=("s_001",),
         statuses={"m_001": "active"}),
    Spec("small_memory_delete.json", ["s_001", "s_002", "s_003", "s_004"], 4),
    Spec("small_memory_consolidate.json", ["s_002", "s_003", "s_004", "s_005"], 4,
         quarantine=["m_004"],
         new_memories=(
             NewMemory("m_n005", "m_f002", "User allergy: peanuts", status=None),
             NewMemory("m_n006", "m_004", "Dietary profile: vegetarian, allergic to peanuts",
                       supersedes="m_001", derived_from=("m_001", "m_n005"))),
         statuses={"m_001": "superseded"}),
    Spec("small_side_effect_compensate.json", ["s_001", "s_002", "s_003", "s_005"], 4,
         tool_calls=2),
    Spec("small_early_cutoff.json", ["s_003", "s_004", "s_005", "s_006", "s_007", "s_009"], 6,
         tool_calls=1, early_cutoff=False,
         new_memories=(NewMemory("m_n004", "m_f003", "P0199 at StoreC: $63.99"),)),
]


def test_every_case_file_is_covered() -> None:
    covered = {s.file for s in RECOVERING} | {
        "small_unresolved.json", "small_side_effect_needs_human.json",
        "small_tool_action_new_observation.json"}
    assert covered == {p.name for p in CASES.glob("*.json")}


def test_paper_cases_keep_the_planner_inputs() -> None:
    """The replay copies only add derivations, facts and world data: every field the planner
    reads (ids, types, links, timestamps, statuses, F) equals the planner case's."""
    def structure(case: Case) -> Any:
        steps = [(s.step_id, s.step_type, s.turn, s.timestamp, s.used_ids, s.sufficient_ids,
                  s.prev_step_ids, s.next_step_ids, s.generated_memory_ids,
                  s.invalidated_memory_ids, s.status) for s in case.trace]
        memories = [(m.memory_id, m.status, m.created_at, m.derived_from, m.sufficient_from,
                     m.supersedes, m.source) for m in case.memory_store]
        inputs = [(u.input_id, u.turn, u.timestamp) for u in case.session]
        return case.task_id, case.diagnosed_faults, steps, memories, inputs
    for spec in RECOVERING:
        if spec.paper:
            planner = parse_case(json.loads((PLANNER / spec.file).read_text()))
            assert structure(load(spec.file)) == structure(planner), spec.file


@pytest.mark.parametrize("spec", RECOVERING, ids=[s.file.removesuffix(".json") for s in RECOVERING])
def test_replay_recovers(store: GraphStore, spec: Spec) -> None:
    case = ingest(store, spec.file)
    task = case.task_id
    facts = required_facts(case)
    assert not recovered(faulty_answer(case), facts), "the faulty answer must not already pass"
    before = snapshot(store, task)
    before_statuses = statuses(store, task)

    # dry run: the same decisions, nothing written
    dry = repair(store, case, dry_run=True, early_cutoff=spec.early_cutoff)
    assert dry.status == "dry_run" and dry.run_id is None
    assert snapshot(store, task) == before

    report = repair(store, case, early_cutoff=spec.early_cutoff)
    # `repaired` only when every replayed step resolved (an unresolved one makes it partial)
    assert report.status == ("partial" if spec.unresolved else "repaired"), report.needs_human
    assert report.answer == dry.answer
    assert recovered(report.answer, facts), report.answer

    # the plan is the planner's (and, for the paper cases, exactly tests/cases/planner's)
    plan = report.plan
    assert plan["replay_step_ids"] == spec.replay
    assert sorted(plan["delete_memory_ids"]) == sorted(case.diagnosed_faults)
    assert sorted(plan["quarantine_memory_ids"]) == sorted(spec.quarantine)
    if spec.paper:
        for name, value in PLANNER_EXPECTED[spec.file].items():
            assert (plan[name] if name in ORDERED else sorted(plan[name])) == \
                (value if name in ORDERED else sorted(value)), name

    # counts
    assert report.counts["replayed_steps"] == spec.replayed_steps
    assert report.counts["early_cutoff_steps"] == spec.early_cutoff_steps
    assert report.counts["tool_calls"] == spec.tool_calls
    assert report.counts["llm_calls"] == 0 and report.counts["tokens"] == 0
    assert sorted(report.unresolved) == sorted(spec.unresolved)
    assert report.restored == list(spec.restored)

    # the stored case: F deleted, quarantine quarantined, benign still active
    after = statuses(store, task)
    assert set(after) == set(before_statuses)  # no recorded memory vanished
    for memory_id in case.diagnosed_faults:
        assert after[memory_id] == "deleted", memory_id
    for memory_id in spec.quarantine:
        assert after[memory_id] == "quarantined", memory_id
    assert case.evaluation is not None
    for memory_id in case.evaluation.benign_memory_ids:
        assert after[memory_id] == "active", memory_id
    for memory_id, status in spec.statuses.items():
        assert after[memory_id] == status, memory_id
    untouched = set(after) - set(case.diagnosed_faults) - set(spec.quarantine) - set(spec.statuses)
    assert all(after[m] == before_statuses[m] for m in untouched)

    # new nodes: one per replayed step (+ refreshed observations) and regenerated memory
    written = new_nodes(store, task)
    all_edges = edges(store, task)
    assert report.new_memory_ids == [m.memory_id for m in spec.new_memories]
    for expected in spec.new_memories:
        node = written[expected.memory_id]
        assert node["kind"] == "memory" and node["origin_run"] == report.run_id
        assert node["replaces"] == expected.replaces
        assert node["content"] == expected.content
        assert node.get("supersedes") == expected.supersedes
        assert sorted(node.get("derived_from", [])) == sorted(expected.derived_from)
        if expected.status is not None:
            assert node["status"] == expected.status
        new_producer = report.replayed[producer_of(case, expected.replaces)]
        assert ("PRODUCE", new_producer, expected.memory_id) in all_edges
        if expected.supersedes:
            assert ("SUPERSEDE", expected.supersedes, expected.memory_id) in all_edges
        for ancestor in expected.derived_from:
            assert ("DERIVE", ancestor, expected.memory_id) in all_edges
    assert sorted(report.active_memory_ids) == sorted(  # the report describes the store
        [m for m, s in after.items() if s == "active"]
        + [m for m, p in written.items() if p["kind"] == "memory" and p["status"] == "active"])

    # every new step REPLAYS the step it replaced, and nothing else does
    replays = {(src, dst) for label, src, dst in all_edges if label == "REPLAYS"}
    assert replays == {(new, old) for old, new in report.replayed.items()}
    for old, new in report.replayed.items():
        assert written[new]["kind"] == "step" and written[new]["replaces"] == old
        assert written[new]["origin_run"] == report.run_id
    new_steps = {i for i, p in written.items() if p["kind"] == "step"}
    assert new_steps == set(report.replayed.values())
    assert set(spec.replay) <= set(report.replayed)  # no early cutoff in these runs

    # a second repair converges: the recorded report, nothing written
    settled = snapshot(store, task)
    again = repair(store, case)
    assert again.status == ("partial" if spec.unresolved else "already_repaired")
    assert again.answer == report.answer and again.run_id == report.run_id
    assert snapshot(store, task) == settled


# -- step types, in detail ----------------------------------------------------------------------

def test_memory_read_reruns_on_the_repaired_store(store: GraphStore) -> None:
    """The read of [m_001, m_f003, m_f009]: root fault m_f009 drops out, m_f003 is replaced by
    its regeneration m_n010."""
    case = ingest(store, "small_memory_read.json")
    report = repair(store, case)
    read = report.replayed["s_004"]
    node = new_nodes(store, case.task_id)[read]
    assert node["used_ids"] == ["m_001", "m_n010"]
    assert node["content"] == "Retrieved: m_001, m_n010"
    into_read = {(label, src) for label, src, dst in edges(store, case.task_id) if dst == read}
    assert ("SUPPORT", "m_001") in into_read and ("SUPPORT", "m_n010") in into_read
    assert not {src for _, src in into_read} & {"m_f003", "m_f009"}


def test_plan_and_tool_action_rederived_with_a_new_observation(store: GraphStore) -> None:
    case = ingest(store, "small_plan_tool_action.json")
    report = repair(store, case)
    written = new_nodes(store, case.task_id)
    plan = written[report.replayed["s_003"]]
    assert plan["content"] == "Search flights SFO to NRT on 2024-08-14"
    action = written[report.replayed["s_004"]]
    assert action["tool_name"] == "search_flights"
    assert json.loads(action["tool_args_json"]) == {
        "origin": "SFO", "destination": "NRT", "date": "2024-08-14"}
    assert action["content"] == "search_flights(date=2024-08-14, destination=NRT, origin=SFO)"
    observation = written[report.replayed["s_005"]]  # refreshed, replacing the old one
    assert observation["step_type"] == "tool_observation"
    assert observation["content"] == "F0028: $275.99; F0031: $310.00"  # the travel pack
    assert {f["entity_id"] for f in step_facts(observation)} == {"F0028", "F0031"}
    all_edges = edges(store, case.task_id)
    assert ("CHAIN", action["id"], observation["id"]) in all_edges
    assert ("CITE", plan["id"], action["id"]) in all_edges
    assert report.answer == "The cheapest flight is F0028 at $275.99."


def test_tool_action_without_recorded_observation_is_reissued(store: GraphStore) -> None:
    """The action s_003 has no observation in the trace: replay re-issues the re-derived call
    and records its result as a new observation step."""
    case = ingest(store, "small_tool_action_new_observation.json")
    report = repair(store, case)
    assert report.counts["tool_calls"] == 1
    written = new_nodes(store, case.task_id)
    action = next(p for p in written.values()
                  if p.get("replaces") == "s_003" and p["step_type"] == "tool_action")
    assert action["content"] == "compare_price(product_id=P0199)"
    observation = next(p for p in written.values() if p["step_type"] == "tool_observation")
    assert observation["content"] == "StoreA: $67.00; StoreB: $66.95; StoreC: $63.99"
    assert observation["prev_step_ids"] == [action["id"]]
    assert ("CHAIN", action["id"], observation["id"]) in edges(store, case.task_id)


def test_new_observation_is_visible_to_later_replayed_steps(store: GraphStore) -> None:
    case = ingest(store, "small_tool_action_new_observation.json")
    report = repair(store, case)
    assert recovered(report.answer, required_facts(case)), report.unresolved


def test_report_maps_a_reissued_action_to_its_replacement(store: GraphStore) -> None:
    case = ingest(store, "small_tool_action_new_observation.json")
    report = repair(store, case)
    written = new_nodes(store, case.task_id)
    assert written[report.replayed["s_003"]]["step_type"] == "tool_action"
    into_action = [src for label, src, dst in edges(store, case.task_id)
                   if label == "REPLAYS" and dst == "s_003"]
    assert into_action == [report.replayed["s_003"]]


def test_memory_update_replayed_supersedes_the_restored_record(store: GraphStore) -> None:
    case = ingest(store, "small_memory_update.json")
    report = repair(store, case)
    update = report.replayed["s_002"]
    all_edges = edges(store, case.task_id)
    assert ("UPDATE", "m_001", update) in all_edges
    assert ("SUPERSEDE", "m_001", "m_n004") in all_edges
    assert report.restored == []  # restored for the replay, then superseded again
    assert statuses(store, case.task_id)["m_001"] == "superseded"
    assert report.answer == "Fly out of OAK."


def test_superseded_record_restored_when_its_superseder_is_deleted(store: GraphStore) -> None:
    case = ingest(store, "small_restore_deleted.json")
    report = repair(store, case)
    assert report.restored == ["m_001"] and report.new_memory_ids == []
    assert statuses(store, case.task_id) == {"m_001": "active", "m_002": "active",
                                             "m_f002": "deleted"}
    assert report.answer == "You prefer the aisle seat."


def test_superseded_record_restored_when_its_superseder_is_quarantined(
        store: GraphStore) -> None:
    """The update that superseded m_001 rested on the deleted root fault: replayed, it is
    unresolved (not justified any more), so nothing supersedes m_001 again."""
    case = ingest(store, "small_restore_quarantined.json")
    report = repair(store, case)
    assert report.restored == ["m_001"] and report.new_memory_ids == []
    assert set(report.unresolved) == {"s_001"}
    got = statuses(store, case.task_id)
    assert got["m_001"] == "active" and got["m_003"] == "quarantined"
    update = new_nodes(store, case.task_id)[report.replayed["s_001"]]
    assert update["content"].startswith("(unresolved") and "LAX" not in update["content"]
    assert report.answer == "Fly out of SFO."


def test_failed_delete_is_replayed(store: GraphStore) -> None:
    case = ingest(store, "small_memory_delete.json")
    report = repair(store, case)
    delete = report.replayed["s_001"]
    assert ("DELETE", "m_001", delete) in edges(store, case.task_id)
    assert new_nodes(store, case.task_id)[delete]["invalidated_memory_ids"] == ["m_001"]
    assert statuses(store, case.task_id)["m_001"] == "deleted"
    assert "window" not in (report.answer or "")


def test_consolidation_replayed_from_a_regenerated_input(store: GraphStore) -> None:
    case = ingest(store, "small_memory_consolidate.json")
    report = repair(store, case)
    consolidate = report.replayed["s_003"]
    all_edges = edges(store, case.task_id)
    assert ("CONSOLIDATE", "m_001", consolidate) in all_edges
    assert ("PRODUCE", consolidate, "m_n006") in all_edges
    assert {("DERIVE", "m_001", "m_n006"), ("DERIVE", "m_n005", "m_n006")} <= all_edges
    assert report.answer == "Request a meal for: vegetarian; avoid peanuts."


def test_consolidation_retires_its_regenerated_input(store: GraphStore) -> None:
    case = ingest(store, "small_memory_consolidate.json")
    report = repair(store, case)
    consolidate = report.replayed["s_003"]
    written = new_nodes(store, case.task_id)
    assert written["m_n005"]["status"] == "superseded"
    assert ("CONSOLIDATE", "m_n005", consolidate) in edges(store, case.task_id)
    assert "m_n005" not in report.active_memory_ids


# -- honest failure -----------------------------------------------------------------------------

def test_step_without_derivation_is_an_honest_failure(store: GraphStore) -> None:
    case = ingest(store, "small_unresolved.json")
    report = repair(store, case)
    assert report.status == "partial"  # the final answer could not be recomputed
    assert set(report.unresolved) == {"s_002", "s_003"}
    assert "no derivation" in report.unresolved["s_002"]
    assert not recovered(report.answer, required_facts(case))
    assert report.answer is None or "delivered" not in report.answer
    claim = new_nodes(store, case.task_id)[report.replayed["s_002"]]
    assert claim["content"].startswith("(unresolved") and "delivered" not in claim["content"]
    assert step_facts(claim) == []  # the old step's facts are not carried over
    assert statuses(store, case.task_id)["m_f001"] == "deleted"
    assert report.counts["llm_calls"] == 0


# -- early cutoff -------------------------------------------------------------------------------

def test_early_cutoff_keeps_dependents_of_an_unchanged_step(store: GraphStore) -> None:
    """The replayed claim s_005 comes out unchanged, so its plan s_006 and that plan's action
    s_007 are kept; the seed and the final answer are replayed regardless."""
    case = ingest(store, "small_early_cutoff.json")
    report = repair(store, case)
    assert report.status == "repaired"
    assert report.counts["replayed_steps"] == 4
    assert report.counts["early_cutoff_steps"] == 2
    assert report.counts["tool_calls"] == 0
    assert set(report.replayed) == {"s_003", "s_004", "s_005", "s_009"}
    written = new_nodes(store, case.task_id)
    original = {s.step_id: s for s in case.trace}
    assert written[report.replayed["s_005"]]["content"] == original["s_005"].content
    replaced = {dst for label, _, dst in edges(store, case.task_id) if label == "REPLAYS"}
    assert not replaced & {"s_006", "s_007", "s_008"}


def test_without_early_cutoff_the_dependents_are_replayed(store: GraphStore) -> None:
    case = ingest(store, "small_early_cutoff.json")
    report = repair(store, case, early_cutoff=False)
    assert report.counts["replayed_steps"] == 6
    assert report.counts["early_cutoff_steps"] == 0
    assert report.counts["tool_calls"] == 1
    assert {"s_006", "s_007", "s_008"} <= set(report.replayed)
    assert recovered(report.answer, required_facts(case))


def test_early_cutoff_does_not_change_the_answer(store: GraphStore) -> None:
    case = ingest(store, "small_early_cutoff.json")
    full = repair(store, case, dry_run=True, early_cutoff=False)
    cut = repair(store, case, early_cutoff=True)
    assert cut.answer == full.answer


# -- side effects -------------------------------------------------------------------------------

@pytest.fixture
def tool_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Every call the repair makes through a ToolRegistry, in order."""
    calls: list[tuple[str, dict[str, Any]]] = []
    original = ToolRegistry.call

    def spy(self: ToolRegistry, tool: str, args: dict[str, Any]) -> Any:
        calls.append((tool, dict(args)))
        return original(self, tool, args)

    monkeypatch.setattr(ToolRegistry, "call", spy)
    return calls


def test_side_effect_without_safe_interface_needs_a_human(
        store: GraphStore, tool_calls: list[tuple[str, dict[str, Any]]]) -> None:
    case = ingest(store, "small_side_effect_needs_human.json")
    before_statuses = statuses(store, case.task_id)
    before_edges = edges(store, case.task_id)
    report = repair(store, case)
    assert report.status == "needs_human"
    assert report.needs_human is not None and report.needs_human["step_id"] == "s_003"
    assert "issue_refund" in report.needs_human["reason"]
    assert tool_calls == []  # the refund was not issued again
    assert report.answer is None
    # only the memory side applied: the diagnosed fault leaves retrieval (deleted), the
    # plan's quarantine applies; no new nodes, no new edges
    after = statuses(store, case.task_id)
    assert after["m_f002"] == "deleted"
    assert report.deleted == ["m_f002"] and "m_f002" not in report.active_memory_ids
    expected = {**before_statuses, **{m: "deleted" for m in report.plan["delete_memory_ids"]},
                **{m: "quarantined" for m in report.plan["quarantine_memory_ids"]}}
    assert after == expected
    assert new_nodes(store, case.task_id) == {}
    assert edges(store, case.task_id) == before_edges
    assert [r["status"] for r in list_runs(store, case.task_id)] == ["needs_human"]
    # the stop is the task's repair: asking again reports it, and applies nothing more
    again = repair(store, case)
    assert again.status == "needs_human" and again.needs_human == report.needs_human
    assert [r["status"] for r in list_runs(store, case.task_id)] == ["needs_human"]
    assert new_nodes(store, case.task_id) == {}


def test_needs_human_report_matches_the_store(store: GraphStore) -> None:
    case = ingest(store, "small_side_effect_needs_human.json")
    report = repair(store, case)
    stored = statuses(store, case.task_id)
    assert report.counts["replayed_steps"] <= 2
    assert set(report.replayed.values()) <= set(new_nodes(store, case.task_id))
    assert sorted(report.active_memory_ids) == sorted(m for m, s in stored.items()
                                                      if s == "active")


def test_compensating_tool_runs_before_the_reissued_call(
        store: GraphStore, tool_calls: list[tuple[str, dict[str, Any]]]) -> None:
    case = ingest(store, "small_side_effect_compensate.json")
    report = repair(store, case)
    assert report.status == "repaired"
    assert tool_calls == [
        ("reverse_refund", {"order_id": "ORD00200", "amount": "$240.00"}),  # recorded args
        ("issue_refund", {"order_id": "ORD00200", "amount": "$120.00"}),    # re-derived
    ]
    assert report.counts["tool_calls"] == 2
    observation = new_nodes(store, case.task_id)[report.replayed["s_004"]]
    assert observation["content"] == "Refunded $120.00 for ORD00200 (R-2)"
    assert report.answer == "Refunded $120.00 for ORD00200."


def test_tool_called_with_other_argument_names_leaves_the_step_unresolved(
        store: GraphStore) -> None:
    """`cancel_booking` given `entity_id` instead of `flight_id`: no traceback, the step is
    unresolved with the reason, and the repair goes on to its answer."""
    raw = json.loads((CASES / "small_plan_tool_action.json").read_text())
    raw["task_id"] = "bad_tool_args"
    for section in ("session", "memory_store", "trace"):
        for record in raw[section]:
            record["task_id"] = "bad_tool_args"
    raw["tools"] = [{"name": "cancel_booking", "side_effect": False, "compensate": None,
                     "idempotent": True}]
    action = next(s for s in raw["trace"] if s["step_id"] == "s_004")
    action["tool_name"], action["tool_args"] = "cancel_booking", {"entity_id": "JL061"}
    action["derivation"] = {"fn": "tool_call", "args": {"tool": "cancel_booking",
                                                        "args": {"entity_id": "JL061"}}}
    case = parse_case(raw)
    ingest_case(store, case)
    report = repair(store, case)
    assert report.status in ("repaired", "partial")  # committed either way
    assert "cancel_booking cannot run with arguments ['entity_id']" in report.unresolved["s_004"]


def test_resume_with_approval_issues_the_call_once_and_finishes(
        store: GraphStore, tool_calls: list[tuple[str, dict[str, Any]]]) -> None:
    from provrepair.repair.service import Resume

    case = ingest(store, "small_side_effect_needs_human.json")
    stopped = repair(store, case)
    assert stopped.status == "needs_human" and tool_calls == []
    done = repair(store, case, resume=Resume(approve=frozenset({"s_003"})))
    # committed; partial because this case's world records no refund result (below)
    assert done.status == "partial" and done.run_id != stopped.run_id
    # approved, and nothing here can run it: unresolved, and nothing was sent
    assert "issue_refund cannot run here" in done.unresolved["s_003"] and tool_calls == []
    assert "s_003" in done.replayed
    # this case's world records no refund result, so the answer honestly lacks its id
    assert done.answer is None and "s_005" in done.unresolved
    assert statuses(store, case.task_id)["m_f002"] == "deleted"
    assert [r["status"] for r in list_runs(store, case.task_id)] == ["needs_human", "partial"]
    # a plain repair reports the partial run as it is (only a full repair is
    # already_repaired), a second resume has nothing to resume
    again = repair(store, case)
    assert again.status == "partial" and again.run_id == done.run_id
    with pytest.raises(NothingToResume, match="is partial"):
        repair(store, case, resume=Resume(approve=frozenset({"s_003"})))


def test_resume_with_skip_leaves_the_step_unresolved(
        store: GraphStore, tool_calls: list[tuple[str, dict[str, Any]]]) -> None:
    from provrepair.repair.service import Resume

    case = ingest(store, "small_side_effect_needs_human.json")
    repair(store, case)
    done = repair(store, case, resume=Resume(skip=frozenset({"s_003"})))
    assert done.status == "partial" and tool_calls == []
    assert "(--skip)" in done.unresolved["s_003"]


def test_resume_without_a_stop_or_with_a_foreign_step_is_refused(store: GraphStore) -> None:
    from provrepair.repair.service import Resume

    case = ingest(store, "small_side_effect_needs_human.json")
    with pytest.raises(NothingToResume, match="has no repair"):
        repair(store, case, resume=Resume())
    repair(store, case)
    with pytest.raises(NothingToResume, match="'s_999' is not one the stopped repair waits on"):
        repair(store, case, resume=Resume(approve=frozenset({"s_999"})))
