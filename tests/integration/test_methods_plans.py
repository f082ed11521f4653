"""Each method's plan on small cases: the paper's travel case (tests/cases/replay) and tiny
hand-made ones. Plans only (the executor is exercised by the integration tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from provrepair.benchmark.methods.common import check_case_plan
from provrepair.provenance.errors import ConfigError
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.models import Case
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from provrepair.repair.methods import MethodContext, MethodNotRun, get_method, method_names, register
from provrepair.repair.plan import compute_plan
from provrepair.repair.plan.model import RepairPlan
from provrepair.repair.reasoners.offline import OfflineReasoner

CASES = Path(__file__).resolve().parent.parent / "cases" / "replay"
TRAVEL = "paper_travel_wrong_user.json"
TRAVEL_STEPS = [f"s_{i:03d}" for i in range(1, 11)]


def stored(store: GraphStore, case: Case) -> Case:
    ingest_case(store, case)
    return read_case(store, case.task_id, with_evaluation=False)


def plan(store: GraphStore, case: Case, method: str) -> RepairPlan:
    ctx = MethodContext(store, case.task_id, stored(store, case), None, OfflineReasoner())
    result = get_method(method).plan(ctx).plan
    check_case_plan(ctx.case, result)
    return result


def load(name: str) -> Case:
    return parse_case(json.loads((CASES / name).read_text()))


@pytest.fixture
def travel(falkordb_store: GraphStore) -> tuple[GraphStore, Case]:
    return falkordb_store, load(TRAVEL)


def test_every_method_is_registered_and_the_engine_keeps_its_own() -> None:
    assert method_names()[:2] == ["dependency_guided", "paper"]  # built in
    assert set(method_names()) == {
        "dependency_guided", "paper", "no_support_check", "no_rollback_planner",
        "no_selective_replay", "no_repair", "full_reset", "delete_retrieved", "memaudit",
        "memaudit_oracle", "llm_judge", "agenttrace", "replay_everything",
        "dependency_guided_echo"}
    # the baselines live beside the engine, with the benchmark, reached by entry points
    assert type(get_method("agenttrace")).__module__ == "provrepair.benchmark.methods.agenttrace"


def test_register_never_replaces_a_built_in_or_a_plugin() -> None:
    impostor = get_method("no_repair")
    for name in ("dependency_guided", "paper", "no_repair"):
        with pytest.raises(ConfigError, match=f"method '{name}' is (built in|provided by)"):
            register(type("Impostor", (), {"name": name, "description": "",
                                           "plan": impostor.plan})())  # type: ignore[arg-type]
    assert type(get_method("dependency_guided")).__name__ == "DependencyGuided"
    assert type(get_method("no_repair")).__name__ == "NoRepair"


def test_no_repair_is_the_empty_plan(travel: tuple[GraphStore, Case]) -> None:
    p = plan(*travel, "no_repair")
    assert (p.delete_memory_ids, p.quarantine_memory_ids, p.replay_step_ids) == ([], [], [])
    assert p.preserve_step_ids == TRAVEL_STEPS


def test_full_reset_deletes_every_active_memory_and_replays_the_final_turn(
        travel: tuple[GraphStore, Case]) -> None:
    store, case = travel
    p = plan(store, case, "full_reset")
    assert p.delete_memory_ids == [m.memory_id for m in case.memory_store]  # all 12 active
    assert p.replay_step_ids == ["s_008", "s_009", "s_010"]
    assert p.preserve_step_ids == TRAVEL_STEPS[:7]
    assert p.invalidate_claim_ids == []


def test_delete_retrieved_deletes_what_affected_earlier_steps_used(
        travel: tuple[GraphStore, Case]) -> None:
    p = plan(*travel, "delete_retrieved")
    # the claim s_002 (turn 1, in A0) cites m_f000 and four benign records: the paper's
    # "preserves only 6 in 10 benign memories"; m_008 is read in the final turn only
    assert p.delete_memory_ids == ["m_f000", "m_001", "m_002", "m_003", "m_005"]
    assert p.replay_step_ids == ["s_008", "s_009", "s_010"]
    assert p.invalidate_claim_ids == []


def test_agenttrace_replays_the_suffix_from_the_root_cause_without_cleanup(
        travel: tuple[GraphStore, Case]) -> None:
    p = plan(*travel, "agenttrace")
    # the backward walk from s_010 reaches the turn-1 read of m_f000 last (s_010 ← s_009 ←
    # s_008 ← m_008 ← s_007 ← s_002 ← s_001): r(s_001) = .4·1 + .25 + .2 + .1·1 + .05·.95
    # ≈ 1.0, the root; the suffix from it is replayed (s_005 refreshed through s_004), and the
    # summary m_008 its replayed write s_007 rewrites is overwritten; no memory decision
    assert p.replay_step_ids == ["s_001", "s_002", "s_003", "s_004", "s_006", "s_007", "s_008",
                                 "s_009", "s_010"]
    assert p.invalidate_claim_ids == p.replay_step_ids
    assert (p.delete_memory_ids, p.quarantine_memory_ids) == ([], ["m_008"])


def test_memaudit_without_oracle_data_finds_nothing_above_the_threshold(
        travel: tuple[GraphStore, Case]) -> None:
    p = plan(*travel, "memaudit")
    assert (p.delete_memory_ids, p.replay_step_ids) == ([], [])  # a no-op: no final-turn replay


def test_memaudit_oracle_removes_the_derived_summary_but_misses_the_root(
        travel: tuple[GraphStore, Case]) -> None:
    # the paper's account of this case: m_f000 matches the manifest (anomaly 1) but deleting
    # it alone changes nothing (influence 0, score 0.5, not above); deleting m_008 does
    p = plan(*travel, "memaudit_oracle")
    assert p.delete_memory_ids == ["m_008"]
    assert p.replay_step_ids == ["s_008", "s_009", "s_010"]


def test_llm_judge_is_not_run_without_an_llm(travel: tuple[GraphStore, Case]) -> None:
    with pytest.raises(MethodNotRun, match="--reasoner openai"):
        plan(*travel, "llm_judge")


def test_no_rollback_planner_replays_every_affected_step(travel: tuple[GraphStore, Case]) -> None:
    store, case = travel
    p = plan(store, case, "no_rollback_planner")
    base = compute_plan(store, case.task_id)[0]
    region = [i for i in base.affected_ids if i.startswith("s_")]
    assert p.replay_step_ids == region == ["s_001", "s_002", "s_006", "s_007", "s_008", "s_009",
                                           "s_010"]
    assert p.invalidate_claim_ids == region
    assert p.delete_memory_ids == base.delete_memory_ids == ["m_f000"]
    assert p.quarantine_memory_ids == []  # the contaminated summary m_008 stays active


def test_no_selective_replay_keeps_the_dispositions_and_replays_everything_after_the_seed(
        travel: tuple[GraphStore, Case]) -> None:
    store, case = travel
    p = plan(store, case, "no_selective_replay")
    base = compute_plan(store, case.task_id)[0]
    # the seed is m_f000 itself (created at 1): every step; s_005 is refreshed by s_004
    assert p.replay_step_ids == [s for s in TRAVEL_STEPS if s != "s_005"]
    assert p.preserve_step_ids == []
    for field in ("delete_memory_ids", "quarantine_memory_ids", "invalidate_claim_ids"):
        assert getattr(p, field) == getattr(base, field)
    assert get_method("no_selective_replay").early_cutoff is False  # type: ignore[attr-defined]


# -- MemAudit on a hand-made contradiction ---------------------------------------------------------

def _memory(memory_id: str, value: str, created: int) -> dict[str, Any]:
    return {"memory_id": memory_id, "task_id": "audit", "content": f"F1 airline {value}",
            "source": "user_input", "last_modified_by": None, "created_at": created,
            "last_modified_at": created, "derived_from": [], "supersedes": None,
            "trust_score": None, "status": "active", "entity_id": "F1", "fact_key": "airline",
            "fact_value": value}


def _step(step_id: str, step_type: str, turn: int, ts: int, used: list[str],
          derivation: dict[str, Any] | None = None) -> dict[str, Any]:
    content = "Your airline is Qantas" if derivation else f"Retrieved: {', '.join(used)}"
    return {"step_id": step_id, "task_id": "audit", "step_type": step_type, "content": content,
            "prev_step_ids": [], "next_step_ids": [], "invalidated_memory_ids": [],
            "generated_memory_ids": [], "used_ids": used, "timestamp": ts, "turn": turn,
            "derivation": derivation}


def audit_case() -> Case:
    lookup = {"fn": "lookup", "args": {"entity_id": "F1", "fact_key": "airline"}}
    answer = {"fn": "template", "args": {"text": "Your airline is {a}", "bind": {"a": lookup}}}
    mems = ["m_1", "m_2", "m_3"]
    return parse_case({
        "format": "provrepair.case/1", "task_id": "audit", "domain": "travel",
        "session": [{"input_id": f"u_{t}", "task_id": "audit", "turn": t, "content": "airline?",
                     "timestamp": 100 * t} for t in (1, 2)],
        "memory_store": [_memory("m_1", "ANA", 1), _memory("m_3", "ANA", 2),
                         _memory("m_2", "Qantas", 3)],
        "trace": [_step("s_1", "claim", 1, 101, ["u_1", *mems], answer),
                  _step("s_2", "memory_read", 2, 201, mems),
                  _step("s_3", "final_answer", 2, 202, ["s_2", "u_2"], answer)],
        "diagnosed_faults": ["m_2"]})


def test_memaudit_deletes_the_contradicted_influential_record(falkordb_store: GraphStore) -> None:
    # m_2: anomaly 2/2 = 1, deleting it turns "Qantas" into "ANA" (influence 1) → 1.0 > 0.5;
    # m_1, m_3: anomaly 1/2, influence 0 → 0.25
    case = audit_case()
    ctx = MethodContext(falkordb_store, case.task_id, stored(falkordb_store, case), None,
                        OfflineReasoner())
    planned = get_method("memaudit").plan(ctx)
    p = planned.plan
    assert p.delete_memory_ids == ["m_2"]
    assert p.replay_step_ids == ["s_2", "s_3"]
    assert p.preserve_step_ids == ["s_1"]
    assert planned.decision.regenerations == 3  # one answer per rerun


def test_replay_everything_deletes_the_faults_and_replays_every_step(
        travel: tuple[GraphStore, Case]) -> None:
    p = plan(*travel, "replay_everything")
    assert p.delete_memory_ids == ["m_f000"]
    assert p.replay_step_ids == [s for s in TRAVEL_STEPS if s != "s_005"]  # s_005 refreshed
    assert p.invalidate_claim_ids == ["s_002", "s_009"]
    assert p.quarantine_memory_ids == ["m_008"]
    assert not get_method("replay_everything").early_cutoff
