"""benchmark.metrics on hand-made cases and outcomes (pure: no store, no replay)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from provrepair.benchmark.metrics import (
    Outcome,
    benign_preservation,
    case_metrics,
    claim_confusion,
    f1,
    faulty_ids,
    faulty_removal,
    micro,
    recovered,
    recurrence,
    replay_counts,
    summarize,
)
from provrepair.provenance.models import Case

T = "t"


def memory(memory_id: str, status: str = "active", fault: str | None = None,
           supersedes: str | None = None) -> dict[str, Any]:
    return {"memory_id": memory_id, "task_id": T, "content": memory_id, "source": "user_input",
            "last_modified_by": None, "created_at": 1, "last_modified_at": 1, "derived_from": [],
            "supersedes": supersedes, "trust_score": None, "status": status, "fault_type": fault}


def step(step_id: str, step_type: str) -> dict[str, Any]:
    return {"step_id": step_id, "task_id": T, "step_type": step_type, "content": step_id,
            "prev_step_ids": [], "next_step_ids": [], "invalidated_memory_ids": [],
            "generated_memory_ids": [], "used_ids": [], "timestamp": 10, "turn": 1}


def make_case(memories: list[dict[str, Any]], steps: list[dict[str, Any]], *,
              benign: Sequence[str] = (), gold_claims: Sequence[str] = (),
              required: Sequence[str] = ("ANA",), faults: Sequence[str] = ()) -> Case:
    return Case.model_validate({
        "format": "provrepair.case/1", "task_id": T, "domain": "travel",
        "session": [{"input_id": "u_1", "task_id": T, "turn": 1, "content": "q", "timestamp": 1}],
        "memory_store": memories, "trace": steps, "diagnosed_faults": list(faults),
        "evaluation": {"expected_answer": "x", "required_facts": list(required),
                       "benign_memory_ids": list(benign), "gold_affected_ids": [],
                       "gold_affected_claim_ids": list(gold_claims), "clean_trace": [],
                       "clean_memory_store": [],
                       "fault_manifest": [{"fault_type": "poisoned", "target": "m_1"}],
                       "primary_fault_type": "poisoned"}})


# -- recovery -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("answer", "facts", "expected"), [
    ("Your flight is with  ANA,\n$275.99", ["ana", "$275.99"], True),
    ("Your flight is with ANA", ["ANA", "$275.99"], False),
    ("Store C at $63.99", ["StoreC"], False),              # no fuzzy matching
    ("Order ORD1 is shipped", ["order   ord1 IS"], True),  # white space collapsed, any case
    (None, ["ANA"], False),
    ("", [], True),
])
def test_recovery_needs_every_required_fact(answer: str | None, facts: list[str],
                                            expected: bool) -> None:
    assert recovered(answer, facts) is expected


def test_a_declared_failure_is_not_recovered_even_with_the_right_answer() -> None:
    case = make_case([memory("m_1")], [step("s_1", "final_answer")])
    assert case_metrics(case, Outcome(answer="ANA"))["recovered"] is True
    assert case_metrics(case, Outcome(answer="ANA", failed=True))["recovered"] is False


# -- faulty removal -------------------------------------------------------------------------------

def test_faulty_ids_are_the_labelled_records_else_the_diagnosed_faults() -> None:
    labelled = make_case([memory("m_f1", fault="poisoned"), memory("m_2")], [], faults=["m_2"])
    assert faulty_ids(labelled) == ["m_f1"]
    unlabelled = make_case([memory("m_f1"), memory("m_2")], [], faults=["m_2"])
    assert faulty_ids(unlabelled) == ["m_2"]


def test_faulty_removal_credits_removal_by_the_repair_only() -> None:
    case = make_case([memory("m_a", fault="poisoned"), memory("m_b", fault="stale"),
                      memory("m_c", "deleted", fault="poisoned"), memory("m_d", fault="wrong_user")],
                     [])
    outcome = Outcome(answer=None, delete=frozenset({"m_a"}),
                      status_after={"m_a": "deleted", "m_b": "superseded", "m_c": "deleted",
                                    "m_d": "active"})
    # m_a deleted by the plan; m_b retired by a replayed mutation (active before);
    # m_c was already inactive and not targeted: mere absence; m_d still active.
    assert faulty_removal(case, outcome) == (2, 4)


def test_a_planned_deletion_that_was_never_applied_is_not_a_removal() -> None:
    case = make_case([memory("m_a", fault="poisoned")], [])
    outcome = Outcome(answer=None, delete=frozenset({"m_a"}), status_after={"m_a": "active"})
    assert faulty_removal(case, outcome) == (0, 1)


# -- benign preservation --------------------------------------------------------------------------

def test_benign_preservation_follows_the_remapping_chain() -> None:
    case = make_case([memory("m_1"), memory("m_2"), memory("m_3"), memory("m_4")], [],
                     benign=["m_1", "m_2", "m_3", "m_4", "m_missing"])
    outcome = Outcome(
        answer=None, quarantine=frozenset({"m_2", "m_3"}),
        status_after={"m_1": "active", "m_2": "quarantined", "m_3": "quarantined",
                      "m_4": "deleted", "m_n5": "superseded", "m_n6": "active"},
        successors={"m_2": ("m_n5",), "m_n5": ("m_n6",)})
    # m_1 kept; m_2 → m_n5 (replaced) → m_n6 (superseded it) active; m_3 and m_4 lost;
    # an id that names no record of the case is not counted
    assert benign_preservation(case, outcome) == (2, 4)


def test_inactive_benign_records_are_preserved_unless_the_repair_targets_them() -> None:
    case = make_case([memory("m_old", "superseded"), memory("m_gone", "superseded"),
                      memory("m_back", "superseded")], [],
                     benign=["m_old", "m_gone", "m_back"])
    outcome = Outcome(answer=None, delete=frozenset({"m_gone"}),
                      status_after={"m_old": "superseded", "m_gone": "deleted",
                                    "m_back": "active"})
    assert benign_preservation(case, outcome) == (2, 3)


def test_a_successor_cycle_does_not_loop() -> None:
    case = make_case([memory("m_1")], [], benign=["m_1"])
    outcome = Outcome(answer=None, status_after={"m_1": "deleted", "m_n2": "deleted"},
                      successors={"m_1": ("m_n2",), "m_n2": ("m_1",)})
    assert benign_preservation(case, outcome) == (0, 1)


# -- claims and replay ----------------------------------------------------------------------------

def test_claim_confusion_scores_only_invalidated_claim_steps() -> None:
    case = make_case([], [step("c1", "claim"), step("c2", "claim"), step("c3", "claim"),
                          step("p1", "plan"), step("f1", "final_answer")],
                     gold_claims=["c1", "c2"])
    outcome = Outcome(answer=None, invalidate=frozenset({"c1", "c3", "p1", "f1"}))
    assert claim_confusion(case, outcome) == (1, 1, 1)


def test_replay_counts_only_selected_steps_with_a_replacement() -> None:
    case = make_case([], [step(f"s_{i}", "claim") for i in range(1, 11)])
    outcome = Outcome(answer=None, replay=frozenset({"s_1", "s_2", "s_3"}),
                      replayed={"s_1": "s_1@r", "s_2": "s_2@r", "s_9": "s_9.obs@r"})
    # s_3 was cut off early (no replacement); s_9 is an auxiliary replacement
    assert replay_counts(case, outcome) == (2, 10)


# -- aggregation ----------------------------------------------------------------------------------

def test_micro_sums_before_dividing() -> None:
    assert micro([(1, 1), (0, 3)]) == 0.25        # macro would give 0.5
    assert micro([(0, 0)]) is None
    assert f1(1, 1, 1) == pytest.approx(0.5)
    assert f1(0, 0, 4) == 0.0                      # a memory-only method scores 0
    assert f1(0, 0, 0) is None


def test_recurrence_counts_decided_probes_of_recovered_cases() -> None:
    rows = [{"recovered": True, "recurred": True}, {"recovered": True, "recurred": False},
            {"recovered": True, "recurred": None}, {"recovered": False, "recurred": True}]
    assert recurrence(rows) == (1, 2)


def test_summarize_micro_averages_and_means() -> None:
    rows = [
        {"recovered": True, "recurred": False, "faulty_removed": 1, "faulty_total": 1,
         "benign_preserved": 9, "benign_total": 10, "claim_tp": 2, "claim_fp": 0,
         "claim_fn": 0, "replayed_original": 4, "original_steps": 20, "llm_calls": 6,
         "tokens": 100},
        {"recovered": False, "recurred": None, "faulty_removed": 0, "faulty_total": 2,
         "benign_preserved": 1, "benign_total": 1, "claim_tp": 0, "claim_fp": 1,
         "claim_fn": 1, "replayed_original": 1, "original_steps": 5, "llm_calls": 0,
         "tokens": 0},
    ]
    s = summarize(rows)
    assert s["n"] == 2 and s["recovery"] == 0.5 and s["recurrence"] == 0.0
    assert s["faulty_removal"] == pytest.approx(1 / 3)
    assert s["benign_preservation"] == pytest.approx(10 / 11)
    assert s["claim_f1"] == pytest.approx(4 / 6)
    assert s["replay_ratio"] == pytest.approx(5 / 25)
    assert s["llm_calls"] == 3.0 and s["tokens"] == 50.0


def test_no_recovered_case_gives_no_recurrence() -> None:
    assert summarize([{"recovered": False, "recurred": None}])["recurrence"] is None


def test_case_metrics_on_a_whole_outcome() -> None:
    case = make_case([memory("m_f1", fault="poisoned"), memory("m_2")],
                     [step("s_1", "claim"), step("s_2", "final_answer")],
                     benign=["m_2"], gold_claims=["s_1"], required=["ANA"])
    outcome = Outcome(answer="ANA", delete=frozenset({"m_f1"}),
                      invalidate=frozenset({"s_1", "s_2"}), replay=frozenset({"s_1", "s_2"}),
                      status_after={"m_f1": "deleted", "m_2": "active"},
                      replayed={"s_1": "s_1@x", "s_2": "s_2@x"}, llm_calls=3, tokens=30)
    assert case_metrics(case, outcome) == {
        "recovered": True, "state_recovered": True, "state_errors": [], "faulty_removed": 1,
        "faulty_total": 1, "benign_preserved": 1,
        "benign_total": 1, "claim_tp": 1, "claim_fp": 0, "claim_fn": 0,
        "replayed_original": 2, "original_steps": 2, "llm_calls": 3, "tokens": 30}
