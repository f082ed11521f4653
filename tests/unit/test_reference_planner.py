"""The reference planner (tests/reference_planner.py) against docs/method.md §1-§4, clause by
clause, on small hand-made cases; and the random-case strategy plus the plan invariants."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from provrepair.benchmark.reference import plan_in_memory
from provrepair.provenance.errors import CaseError
from provrepair.provenance.models import Case
from provrepair.provenance.order import final_answer_step
from provrepair.provenance.validate import validate_case
from provrepair.repair.plan.invariants import check_plan
from provrepair.repair.plan.model import RepairPlan
from tests.strategies import CaseBuilder, provenance_cases, random_case


def b(chain: bool = False) -> CaseBuilder:
    """A builder with one user input u1 (turn 1, ts 0) and a benign active root m0 (ts 0)."""
    return CaseBuilder(chain=chain).user("u1").mem("m0")


# -- §1 seed resolution --------------------------------------------------------------------

def test_seed_failed_mutation_beats_producer_earliest_by_ts_then_position() -> None:
    case = (b().step("w", "memory_write", 10, gen=["m2"]).mem("m2", 10)
            .step("late", "memory_update", 30, inv=["m2"])     # later ts, earlier position
            .step("d1", "memory_delete", 20, inv=["m2"])
            .step("d2", "memory_consolidate", 20, inv=["m2"])  # same ts, later position
            .case(["m2"]))
    assert plan_in_memory(case)["seeds"] == {"m2": "d1"}


def test_seed_is_producer_when_the_mutation_took_effect() -> None:
    case = (b().step("w2", "memory_write", 12, gen=["m2"]).step("w1", "memory_write", 10, gen=["m2"])
            .mem("m2", 10, status="deleted").step("d", "memory_delete", 20, inv=["m2"])
            .case(["m2"]))
    # m2 is no longer active: d is not a failed mutation; earliest producer by ts wins.
    assert plan_in_memory(case)["seeds"] == {"m2": "w1"}


def test_seed_is_the_memory_itself_for_a_root_fault() -> None:
    case = b().mem("m1", 5).step("r", "memory_read", 6, used=["m1"]).case(["m1"])
    plan = plan_in_memory(case)
    assert plan["seeds"] == {"m1": "m1"}
    assert plan["affected_ids"] == ["m1", "r"]


def test_a_fault_that_is_not_a_memory_is_a_user_error() -> None:
    case = b().step("c", "claim", 1).case(["m0"])
    with pytest.raises(CaseError) as err:
        plan_in_memory(case, ["c"])
    assert err.value.offending_id == "c"


def test_faults_argument_overrides_the_case() -> None:
    case = b().mem("m1", 5).step("r", "memory_read", 6, used=["m1"]).case(["m1"])
    plan = plan_in_memory(case, ["m0"])
    assert plan["seeds"] == {"m0": "m0"} and plan["delete_memory_ids"] == ["m0"]


def test_empty_faults_is_a_user_error() -> None:
    case = b().step("c", "claim", 1).case([])
    with pytest.raises(CaseError) as err:
        plan_in_memory(case)
    assert err.value.field == "diagnosed_faults" and err.value.task_id == "t_ref"
    with pytest.raises(CaseError):
        plan_in_memory(b().step("c", "claim", 1).case(["m0"]), [])


# -- §2 affected candidates ----------------------------------------------------------------

def test_timestamp_filter_admits_equal_and_does_not_traverse_earlier_nodes() -> None:
    case = (b().mem("m1", 10)
            .step("early", "claim", 5, used=["m1"])   # ts < t_r: not a dependent
            .step("equal", "memory_read", 10, used=["m1"])  # ts == t_r: admitted
            .step("via_early", "claim", 20, used=["early"])  # reachable only through `early`
            .step("via_equal", "claim", 20, used=["equal"])
            .case(["m1"]))
    assert plan_in_memory(case)["affected_ids"] == ["equal", "m1", "via_equal"]


def test_chain_never_propagates() -> None:
    case = (b(chain=True).mem("m1", 1).step("r", "memory_read", 10, used=["m1"])
            .step("c", "claim", 11, used=["u1"])          # chained after r, no E_prop edge
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["affected_ids"] == ["m1", "r"]
    assert plan["preserve_step_ids"] == ["c"]


def test_stale_fault_expands_from_the_record_after_the_failed_mutation() -> None:
    case = (b().mem("m1", 1)
            .step("r_before", "memory_read", 10, used=["m1"])
            .step("c_before", "claim", 11, used=["r_before"])
            .step("upd", "memory_update", 20, inv=["m1"], gen=["m2"])  # m1 stays active: failed
            .mem("m2", 20, derived=["m1"], supersedes="m1")
            .step("r_after", "memory_read", 30, used=["m1"])
            .step("c_after", "claim", 31, used=["r_after"])
            .step("ans", "final_answer", 32, used=["c_after"])
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["seeds"] == {"m1": "upd"}
    assert plan["affected_ids"] == ["ans", "c_after", "m1", "m2", "r_after", "upd"]
    assert plan["quarantine_memory_ids"] == ["m2"]
    assert plan["answer_relevant_ids"] == ["ans", "c_after", "r_after"]
    assert plan["replay_step_ids"] == ["upd", "r_after", "c_after", "ans"]
    assert plan["preserve_step_ids"] == ["c_before", "r_before"]
    assert plan["suspicious_step_ids"] == []


# -- §3 independent-support check ----------------------------------------------------------

def test_support_needs_a_sufficient_admissible_independent_predecessor() -> None:
    case = (CaseBuilder(chain=False).user("u1", 1).user("u2", 2).mem("m0").mem("m1", 1)
            .mem("gone", 0, status="deleted")
            .step("ok_obs", "tool_observation", 2).step("err_obs", "tool_observation", 2, status="error")
            .step("p0", "plan", 2).step("k0", "claim", 2).step("r0", "memory_read", 2, used=["m0"])
            .step("by_mem", "claim", 5, used=["m1", "m0"], suff=["m0"])
            .step("insufficient", "claim", 5, used=["m1", "m0"])
            .step("by_input", "claim", 5, used=["m1", "u1"], suff=["u1"])
            .step("other_turn", "claim", 5, used=["m1", "u1"], suff=["u1"], turn=2)
            .step("by_inactive", "claim", 5, used=["m1", "gone"], suff=["gone"])
            .step("by_ok_obs", "claim", 5, used=["m1", "ok_obs"], suff=["ok_obs"])
            .step("by_err_obs", "claim", 5, used=["m1", "err_obs"], suff=["err_obs"])
            .step("by_plan", "claim", 5, used=["m1", "p0"], suff=["p0"])
            .step("by_claim", "claim", 5, used=["m1", "k0"], suff=["k0"])
            .step("by_read", "claim", 5, used=["m1", "r0"], suff=["r0"])
            .step("by_fault", "claim", 5, used=["m1"], suff=["m1"])
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["supported_ids"] == ["by_claim", "by_input", "by_mem", "by_ok_obs"]
    assert set(plan["invalidate_claim_ids"]) == {
        "insufficient", "other_turn", "by_inactive", "by_err_obs", "by_plan", "by_read", "by_fault"}


def test_no_mutual_validation() -> None:
    case = (b().mem("m1", 1).step("c1", "claim", 5, used=["m1", "m0"], suff=["m0"])
            .step("c2", "claim", 6, used=["c1"], suff=True)
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["supported_ids"] == ["c1"]
    assert plan["invalidate_claim_ids"] == ["c2"]


def test_derived_memory_support_and_quarantine_of_active_records_only() -> None:
    case = (b().mem("m1", 1).mem("old", 0, status="superseded").mem("live", 0)
            .mem("d_ok", 2, derived=["m0", "m1"], suff_from=["m0"])
            .mem("d_insufficient", 2, derived=["m0", "m1"])
            .mem("d_sup_superseded", 2, derived=["m1"], supersedes="old")
            .mem("d_sup_active", 2, derived=["m1"], supersedes="live")  # SUPERSEDE: sufficient
            .mem("d_inactive", 2, derived=["m1"], status="deleted")
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["supported_ids"] == ["d_ok", "d_sup_active"]
    assert plan["quarantine_memory_ids"] == ["d_insufficient", "d_sup_superseded"]
    assert plan["delete_memory_ids"] == ["m1"]
    assert "d_inactive" in plan["affected_ids"]


def test_actions_and_observations_inherit_their_verdicts() -> None:
    case = (b().mem("m1", 1).step("p0", "plan", 1)
            .step("p1", "plan", 5, used=["m1", "u1"], suff=["u1"])  # affected, supported
            .step("a1", "tool_action", 6, used=["p1"])
            .step("o1", "tool_observation", 7, used=["a1"])
            .step("a2", "tool_action", 6, used=["p1", "m1"])       # reads F directly
            .step("o2", "tool_observation", 7, prev=["a2"])        # action only via CHAIN
            .step("p2", "plan", 5, used=["m1"])                    # unsupported plan
            .step("a3", "tool_action", 6, used=["p2"])
            .step("o3", "tool_observation", 7, used=["a3"])
            .step("a4", "tool_action", 6, used=["m1"])             # no controlling plan
            .step("a5", "tool_action", 6, used=["p1", "p0"])       # p0 not in A0
            .step("o4", "tool_observation", 7, used=["a1", "a2"])  # one action unsupported
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["supported_ids"] == ["a1", "a5", "o1", "p1"]
    assert "o2" not in plan["affected_ids"]
    # V_inv: A ∩ steps, closed plan → action → observation (o2 joins through prev_step_ids).
    assert plan["invalidate_claim_ids"] == ["a2", "a3", "a4", "o2", "o3", "o4", "p2"]
    assert plan["suspicious_step_ids"] == plan["invalidate_claim_ids"]


def test_invalidation_closure_reaches_actions_outside_a0() -> None:
    case = (b().mem("m1", 18).step("p", "plan", 20, used=["m1"])
            .step("a", "tool_action", 15, used=["p"])   # earlier than t_r: not in A0
            .step("o", "tool_observation", 16, used=["a"])
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["affected_ids"] == ["m1", "p"]
    assert plan["invalidate_claim_ids"] == ["a", "o", "p"]
    assert plan["suspicious_step_ids"] == ["a", "o", "p"]


# -- §4 rollback plan ----------------------------------------------------------------------

def test_v_final_is_the_last_final_answer_and_always_replayed() -> None:
    case = (b().mem("m1", 1).step("f1", "final_answer", 10, used=["u1"])
            .step("f2", "final_answer", 20, used=["u1"])
            .step("f3", "final_answer", 20, used=["u1"])   # tie on ts: later position wins
            .step("f4", "final_answer", 15, used=["u1"])   # later position, earlier ts
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["affected_ids"] == ["m1"]
    assert plan["replay_step_ids"] == ["f3"]
    assert plan["preserve_step_ids"] == ["f1", "f2", "f4"]


def test_without_final_answer_only_seeds_are_replayed() -> None:
    case = (b().step("w", "memory_write", 10, gen=["m1"]).mem("m1", 10)
            .step("c", "claim", 11, used=["m1"]).case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["replay_step_ids"] == ["w"]
    assert plan["suspicious_step_ids"] == ["c"]


def test_seeds_are_replayed_even_when_supported() -> None:
    case = (b().step("w", "memory_write", 10, used=["m0"], suff=["m0"], gen=["m1"]).mem("m1", 10)
            .mem("m2", 1).step("d", "memory_delete", 12, used=["u1"], suff=["u1"], inv=["m2"])
            .case(["m1", "m2"]))
    plan = plan_in_memory(case)
    assert plan["seeds"] == {"m1": "w", "m2": "d"}
    assert plan["supported_ids"] == ["d", "w"]
    assert plan["replay_step_ids"] == ["w", "d"]
    assert plan["invalidate_claim_ids"] == [] and plan["preserve_step_ids"] == []


def test_observation_maps_to_its_generating_action() -> None:
    case = (b().mem("m1", 1).step("p", "plan", 2, used=["u1"], suff=True)
            .step("a", "tool_action", 3, used=["p"])
            .step("o", "tool_observation", 4, used=["a", "m1"])  # reads the fault directly
            .step("f", "final_answer", 5, used=["o"])
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["invalidate_claim_ids"] == ["f", "o"]
    assert plan["answer_relevant_ids"] == ["f", "o"]
    assert plan["replay_step_ids"] == ["a", "f"]     # o refreshed by replaying a
    assert plan["suspicious_step_ids"] == []          # o: observation of a replayed action
    assert plan["preserve_step_ids"] == ["p"]


def test_an_observation_seed_is_replayed_through_its_action() -> None:
    case = (b(chain=True).step("p", "plan", 2, used=["u1"], suff=True)
            .step("a", "tool_action", 3, used=["p"])
            .step("o", "tool_observation", 4, gen=["m1"])  # action only via prev_step_ids
            .mem("m1", 4).step("c", "claim", 5, used=["m1"])
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["seeds"] == {"m1": "o"}
    assert plan["replay_step_ids"] == ["a"]
    assert plan["invalidate_claim_ids"] == ["c", "o"]
    assert plan["suspicious_step_ids"] == ["c"]


def test_closure_passes_through_removed_memories_to_their_producers() -> None:
    case = (b().mem("m1", 1).step("w", "memory_write", 10, used=["m1"], gen=["m2"])
            .mem("m2", 10, derived=["m1"])
            .step("r", "memory_read", 20, used=["m2"])
            .step("f", "final_answer", 21, used=["r"])
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["quarantine_memory_ids"] == ["m2"]
    assert plan["answer_relevant_ids"] == ["f", "r"]   # w → m2 is severed in G⁻
    assert plan["replay_step_ids"] == ["w", "r", "f"]  # ... but regenerated through m2


def test_a_supported_producer_rewrites_its_quarantined_record() -> None:
    """Rule 8 (beyond the spec, which keeps w preserved and m2 withdrawn for good): the step
    is supported but its record, derived from the fault, is quarantined; w is replayed so
    that m2 is rewritten from the repaired context."""
    case = (b().mem("m1", 1).step("w", "memory_write", 10, used=["m1", "m0"], suff=["m0"],
                                  gen=["m2"])
            .mem("m2", 10, derived=["m1"])
            .step("r", "memory_read", 20, used=["m2"])
            .step("f", "final_answer", 21, used=["r"])
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["supported_ids"] == ["w"]
    assert plan["quarantine_memory_ids"] == ["m2"]
    assert plan["replay_step_ids"] == ["w", "r", "f"]
    assert plan["preserve_step_ids"] == []
    assert plan["invalidate_claim_ids"] == ["f", "r"]   # w stays supported, not invalidated


def test_a_quarantined_record_no_replayed_step_reads_is_rewritten() -> None:
    """Rule 8: the final answer's citation of the record was lost (f cites nothing), so no
    closure walk reaches m2; its producer is replayed all the same."""
    case = (b().mem("m1", 1).step("w", "memory_write", 10, used=["m1"], gen=["m2"])
            .mem("m2", 10, derived=["m1"])
            .step("f", "final_answer", 21, used=[])
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["quarantine_memory_ids"] == ["m2"]
    assert plan["answer_relevant_ids"] == []            # f is not affected (rule 7 replays it)
    assert plan["replay_step_ids"] == ["w", "f"]


def test_supported_memories_keep_reachability_in_the_severed_graph() -> None:
    case = (b().mem("m1", 1).step("w", "memory_write", 10, used=["m1"], gen=["m2"])
            .mem("m2", 10, derived=["m0", "m1"], suff_from=["m0"])
            .step("r", "memory_read", 20, used=["m2"])
            .step("f", "final_answer", 21, used=["r"])
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["supported_ids"] == ["m2"] and plan["quarantine_memory_ids"] == []
    assert plan["answer_relevant_ids"] == ["f", "r", "w"]
    assert plan["replay_step_ids"] == ["w", "r", "f"]


def test_unsupported_steps_off_the_answer_path_are_suspicious() -> None:
    case = (b().mem("m1", 1).step("c", "claim", 5, used=["m1"])
            .step("f", "final_answer", 10, used=["u1"])
            .case(["m1"]))
    plan = plan_in_memory(case)
    assert plan["invalidate_claim_ids"] == ["c"]
    assert plan["suspicious_step_ids"] == ["c"]
    assert plan["replay_step_ids"] == ["f"]


# -- the strategy and the invariants ---------------------------------------------------------

def check_invariants(case: Case, plan: dict[str, Any]) -> None:
    """The product's plan invariants (repair/plan/invariants.py), then properties the
    reference planner's output must also have."""
    steps = [s.step_id for s in case.trace]
    mems = {m.memory_id: m for m in case.memory_store}
    final = final_answer_step(case)
    check_plan(RepairPlan(task_id=case.task_id, **plan), steps=steps, memories=mems,
               faults=case.diagnosed_faults, final_id=final.step_id if final else None)
    delete, quar = set(plan["delete_memory_ids"]), set(plan["quarantine_memory_ids"])
    replay, preserve = set(plan["replay_step_ids"]), set(plan["preserve_step_ids"])
    inv, susp = set(plan["invalidate_claim_ids"]), set(plan["suspicious_step_ids"])
    affected, supported = set(plan["affected_ids"]), set(plan["supported_ids"])
    assert plan["redundant_step_ids"] == [] and delete == set(case.diagnosed_faults)
    assert replay | preserve | inv == set(steps)
    assert plan["replay_step_ids"] == [s for s in steps if s in replay]
    assert supported <= affected and not supported & delete
    assert delete <= affected and all(mems[m].status == "active" for m in quar)
    assert set(plan["answer_relevant_ids"]) <= inv and susp <= inv and not susp & replay
    assert set(plan["seeds"]) == delete


@settings(max_examples=300, deadline=None)
@given(provenance_cases())
def test_generated_cases_are_valid_and_plans_keep_the_invariants(case: Case) -> None:
    validate_case(case)
    assert 1 <= len(case.diagnosed_faults) <= 3 and 1 <= len(case.session) <= 3
    assert sum(s.step_type == "final_answer" for s in case.trace) <= 2
    check_invariants(case, plan_in_memory(case))


def test_random_case_is_deterministic_and_large() -> None:
    one, two = random_case(7, 600), random_case(7, 600)
    assert one == two and len(one.trace) == 600 and len(one.session) == 3
    assert {s.step_type.value for s in one.trace} >= {
        "memory_read", "claim", "plan", "tool_action", "tool_observation", "final_answer",
        "memory_write", "memory_delete", "memory_update", "memory_consolidate"}
    check_invariants(one, plan_in_memory(one))
