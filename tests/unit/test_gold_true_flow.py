"""Claim F1's gold from the true flow of the fault (benchmark/labels.py, issue 31): every claim
the faults reach through what the run truly read without independent trusted support there,
not every claim whose text changed."""

from __future__ import annotations

from provrepair.benchmark import labels
from provrepair.benchmark.generate import generate_cases
from provrepair.provenance.models import Case
from provrepair.provenance.vocab import FaultType, StepType
from tests.strategies import CaseBuilder


def runs(fault_ts: int = 1, failed_update: int | None = None) -> CaseBuilder:
    """u1, a benign record m0 and the fault m1 (written at `fault_ts`; with `failed_update`,
    a stale record whose update at that time failed); c_read cites m1, c_other cites m0 only,
    c_before cites m0 before the update; the final answer cites c_read."""
    builder = CaseBuilder(chain=False).user("u1").mem("m0").mem("m1", fault_ts)
    builder.step("c_before", "claim", 5, used=["m0"])
    if failed_update is not None:
        builder.step("upd", "memory_update", failed_update, used=["u1"], inv=["m1"])
    return (builder.step("c_read", "claim", 20, used=["m1"])
            .step("c_other", "claim", 21, used=["m0"])
            .step("f", "final_answer", 30, used=["c_read"]))


def rewritten(case: Case, contents: dict[str, str]) -> Case:
    trace = [s.model_copy(update={"content": contents[s.step_id]}) if s.step_id in contents
             else s for s in case.trace]
    return case.model_copy(update={"trace": trace})


def gold(clean: Case, faulty: Case, leaks: dict[str, str]) -> tuple[list[str], list[str]]:
    """(gold claims, claims whose text changed)."""
    evaluation = labels.evaluation(clean, faulty, ["m1"], ["x"], [], FaultType.POISONED, leaks)
    claims = {s.step_id for s in faulty.trace if s.step_type is StepType.CLAIM}
    return evaluation.gold_affected_claim_ids, sorted(set(evaluation.gold_affected_ids) & claims)


def test_a_claim_that_read_the_fault_is_gold_though_its_text_is_unchanged() -> None:
    clean = runs().case(["m1"])
    faulty = rewritten(clean, {"f": "the wrong answer"})
    claims, changed = gold(clean, faulty, {})
    assert claims == ["c_read"]        # it read m1; its text is the clean one
    assert changed == []               # the old definition (the diff) had no gold claim


def test_a_leak_no_edge_records_is_true_flow() -> None:
    """c_other repeats the fault's content without citing it (fidelity.py's leak)."""
    clean = runs().case(["m1"])
    faulty = rewritten(clean, {"c_other": "c_other (as noted: m1)", "f": "the wrong answer"})
    claims, changed = gold(clean, faulty, {"c_other": "m1"})
    assert claims == ["c_read", "c_other"]
    assert changed == ["c_other"]


def test_a_leak_of_a_stale_record_before_its_failed_update_is_not_gold() -> None:
    """m1 was right until its update failed at ts 10: a claim repeating it at ts 5 changed
    text (a generator artefact) but read a value that was valid then."""
    clean = runs(failed_update=10).case(["m1"])
    faulty = rewritten(clean, {"c_before": "c_before (as noted: m1)", "f": "the wrong answer"})
    claims, changed = gold(clean, faulty, {"c_before": "m1"})
    assert claims == ["c_read"]
    assert changed == ["c_before"]


def test_a_claim_with_independent_trusted_support_is_not_gold() -> None:
    """c_both read the fault and the user's own input, the input alone sufficient (§3): it
    needs neither invalidation nor re-derivation, so it is no positive of claim F1."""
    builder = CaseBuilder(chain=False).user("u1").mem("m1", 1)
    clean = (builder.step("c_both", "claim", 20, used=["m1", "u1"], suff=["u1"])
             .step("c_read", "claim", 21, used=["m1"])
             .step("f", "final_answer", 30, used=["c_both", "c_read"])).case(["m1"])
    faulty = rewritten(clean, {"f": "the wrong answer"})
    claims, _ = gold(clean, faulty, {})
    assert claims == ["c_read"]


def test_generated_gold_agrees_with_the_diff_when_the_recording_is_exact() -> None:
    """At fidelity 1.0 (no leaks) the claims the faults reach without support are exactly the
    claims whose text or facts changed: the two definitions part only where the recording
    is not the truth (leaks, test above) or a stale value was valid when read."""
    total = 0
    for case in generate_cases(42, limit=12):
        assert case.evaluation is not None
        claims = {s.step_id for s in case.trace if s.step_type is StepType.CLAIM}
        changed = set(case.evaluation.gold_affected_ids) & claims
        assert set(case.evaluation.gold_affected_claim_ids) == changed
        total += len(changed)
    assert total > 0
