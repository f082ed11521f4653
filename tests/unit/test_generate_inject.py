"""Fault injection as the paper's appendix describes it, checked on real runs of one session
script per domain: what the faulty run looks like, and the labels diffed from the clean run."""

from __future__ import annotations

import random

import pytest

from provrepair.benchmark import labels
from provrepair.benchmark.build import Outcome, _pick, assemble
from provrepair.benchmark.domains import BUILDERS
from provrepair.benchmark.inject import corruptions
from provrepair.benchmark.lookalikes import labelled
from provrepair.benchmark.quotas import Slot
from provrepair.benchmark.runtime import run_session
from provrepair.provenance.models import Case
from provrepair.provenance.vocab import FaultType, MemorySource, MemoryStatus, StepType

MUTATIONS = {StepType.MEMORY_UPDATE, StepType.MEMORY_CONSOLIDATE}


def injected(domain: str, kind: FaultType, seed: int = 3) -> tuple[Case, Case]:
    """(clean, faulty case) for the first fault of `kind` that changes the final answer."""
    for attempt in range(20):
        rng = random.Random(f"{seed}:{attempt}")
        session = BUILDERS[domain](rng, 1)
        slot = Slot(f"{domain}_t", domain, kind, 1, "9–11")
        clean = run_session(session, slot.task_id)
        picked = _pick(kind, slot, session, (clean, clean), [], rng)
        if picked is not None:
            faults, faulty = picked
            return clean.sink.case(), assemble(slot, Outcome(clean, faulty, faults))
    raise AssertionError(f"no {kind} fault found for {domain}")


def by_id(case: Case) -> dict[str, object]:
    return {**{m.memory_id: m for m in case.memory_store}, **{s.step_id: s for s in case.trace}}


@pytest.mark.parametrize("domain", sorted(BUILDERS))
def test_poisoned_rewrites_a_written_record_and_its_producer(domain: str) -> None:
    clean, case = injected(domain, FaultType.POISONED)
    entry = case.evaluation.fault_manifest[0].model_dump()  # type: ignore[union-attr]
    faulty = next(m for m in case.memory_store if m.memory_id == entry["faulty_id"])
    original = next(m for m in clean.memory_store if m.memory_id == entry["target"])
    producer = next(s for s in case.trace if s.step_id == entry["producer_step"])
    assert faulty.memory_id == "m_f" + original.memory_id[2:]
    assert faulty.fact_value == entry["corrupted_value"] != original.fact_value
    assert (faulty.created_at, faulty.source) == (original.created_at, original.source)
    assert producer.step_type is StepType.MEMORY_WRITE
    assert producer.generated_memory_ids == [faulty.memory_id]
    assert entry["corrupted_value"] in producer.content
    clean_producer = next(s for s in clean.trace if s.step_id == producer.step_id)
    assert producer.derivation == clean_producer.derivation  # the honest derivation stays


@pytest.mark.parametrize("domain", sorted(BUILDERS))
def test_stale_leaves_the_consumed_record_active_and_drops_the_new_lineage(domain: str) -> None:
    clean, case = injected(domain, FaultType.STALE)
    entry = case.evaluation.fault_manifest[0].model_dump()  # type: ignore[union-attr]
    stale = next(m for m in case.memory_store if m.memory_id == entry["target"])
    consumer = next(s for s in case.trace if s.step_id == entry["consumer_step"])
    assert stale.status is MemoryStatus.ACTIVE and stale.fault_type is FaultType.STALE
    assert consumer.invalidated_memory_ids == [stale.memory_id]
    assert consumer.generated_memory_ids == []
    stored = {m.memory_id for m in case.memory_store}
    assert not set(entry["removed"]) & stored
    clean_record = next(m for m in clean.memory_store if m.memory_id == stale.memory_id)
    assert clean_record.status is not MemoryStatus.ACTIVE


@pytest.mark.parametrize("domain", sorted(BUILDERS))
def test_wrong_user_inserts_a_root_record_at_the_start_of_the_timeline(domain: str) -> None:
    _, case = injected(domain, FaultType.WRONG_USER)
    root = case.memory_store[0]
    assert root.memory_id == "m_f000" and case.diagnosed_faults == ["m_f000"]
    assert root.source is MemorySource.INJECTED and root.fault_type is FaultType.WRONG_USER
    assert root.last_modified_by is None
    added = labelled(case)  # the echo sweep's look-alikes (lookalikes.py), added afterwards
    assert root.created_at < min(m.created_at for m in case.memory_store[1:]
                                 if m.memory_id not in added)
    assert not any(root.memory_id in s.generated_memory_ids for s in case.trace)


@pytest.mark.parametrize("domain", sorted(BUILDERS))
def test_summary_drift_corrupts_a_derived_consolidation_or_update_output(domain: str) -> None:
    _, case = injected(domain, FaultType.SUMMARY_DRIFT)
    entry = case.evaluation.fault_manifest[0].model_dump()  # type: ignore[union-attr]
    drifted = next(m for m in case.memory_store if m.memory_id == entry["faulty_id"])
    producer = next(s for s in case.trace if s.step_id == entry["producer_step"])
    assert drifted.derived_from and producer.step_type in MUTATIONS
    assert drifted.fault_type is FaultType.SUMMARY_DRIFT


@pytest.mark.parametrize("kind", list(FaultType))
def test_labels_come_from_the_diff_of_the_clean_and_faulty_runs(kind: FaultType) -> None:
    clean, case = injected("customer_support", kind)
    evaluation = case.evaluation
    assert evaluation is not None
    assert evaluation.expected_answer == labels.final_answer(clean)
    assert labels.contains_all(evaluation.expected_answer, evaluation.required_facts)
    assert not labels.contains_all(labels.final_answer(case), evaluation.required_facts)
    gold, benign = set(evaluation.gold_affected_ids), set(evaluation.benign_memory_ids)
    assert set(case.diagnosed_faults) <= gold and not gold & benign
    clean_steps = {s.step_id: s for s in clean.trace}
    # the look-alikes' writes (the user's own statements, lookalikes.py) are the only new steps
    assert {s.step_id for s in case.trace} - set(clean_steps) == {
        s.step_id for s in case.trace if s.step_id.startswith("s_i")}
    for step in case.trace:
        if step.step_id not in clean_steps:
            continue
        changed = clean_steps[step.step_id].content != step.content
        assert changed <= (step.step_id in gold)
    claims = {s.step_id for s in case.trace if s.step_type is StepType.CLAIM}
    assert gold & claims <= set(evaluation.gold_affected_claim_ids)  # + the reached, unchanged
    final = [s.step_id for s in case.trace if s.step_type is StepType.FINAL_ANSWER][-1]
    assert final in gold
    assert evaluation.clean_trace == clean.trace and evaluation.primary_fault_type is kind


def test_corruptions_shift_amounts_and_swap_vocabulary() -> None:
    rng = random.Random(0)
    assert all(v.startswith("StoreC at $") for v in corruptions("StoreC at $63.99", rng)[:2])
    assert "45 days" not in corruptions("45 days", rng)
    assert set(corruptions("economy", rng)) <= {"premium economy", "business", "first"}
    assert corruptions("P0199", rng) == []
