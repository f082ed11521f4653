"""Provenance fidelity of generated cases (benchmark/fidelity.py) and the stratified
sample of `--limit`: what a lower fidelity changes, and that the gold labels see it."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from provrepair.benchmark.generate import generate_cases
from provrepair.benchmark.probe import fact_probes, fact_recurrence
from provrepair.benchmark.quotas import slots, subset
from provrepair.benchmark.runtime import memory_first
from provrepair.benchmark.summary import manifest
from provrepair.provenance.errors import InputError
from provrepair.provenance.models import Case, MemoryRecord
from provrepair.provenance.vocab import MemoryStatus, StepType
from provrepair.repair.derive import Context, FactSource, evaluate


@pytest.fixture(scope="module")
def levels() -> dict[float, list[Case]]:
    return {level: generate_cases(42, limit=12, fidelity=level) for level in (1.0, 0.6)}


def echoes(case: Case) -> list[str]:
    return [m.memory_id for m in case.memory_store if m.memory_id.startswith("m_e")]


def leaks(case: Case) -> list[str]:
    return [s.step_id for s in case.trace if "(as noted: " in s.content]


def test_full_fidelity_is_the_runtime_as_it_ran(levels: dict[float, list[Case]]) -> None:
    assert not any(echoes(c) or leaks(c) for c in levels[1.0])
    assert [c.task_id for c in levels[1.0]] == [c.task_id for c in levels[0.6]]


def test_lower_fidelity_loses_and_invents_citations(levels: dict[float, list[Case]]) -> None:
    exact = {(c.task_id, s.step_id): s for c in levels[1.0] for s in c.trace}
    dropped = invented = flags = 0
    for case in levels[0.6]:
        for step in case.trace:
            true = exact[(case.task_id, step.step_id)]
            dropped += len(set(true.used_ids) - set(step.used_ids))
            invented += len(set(step.used_ids) - set(true.used_ids))
            flags += step.sufficient_ids != true.sufficient_ids
            assert set(step.sufficient_ids) <= set(step.used_ids)
    assert dropped > 0 and invented > 0 and flags > 0


def test_unrecorded_flow_is_in_the_gold_labels(levels: dict[float, list[Case]]) -> None:
    """Echo records and uncited content leaks are part of the run: gold sees them, the
    recorded edges do not reach them."""
    found = 0
    for case in levels[0.6]:
        assert case.evaluation is not None
        gold = set(case.evaluation.gold_affected_ids)
        for memory_id in echoes(case):
            record = next(m for m in case.memory_store if m.memory_id == memory_id)
            assert memory_id in gold and record.derived_from == [] and record.last_modified_by is None
            found += 1
        for step_id in leaks(case):
            assert step_id in gold
            found += 1
    assert found > 0


def test_fidelity_out_of_range_is_refused() -> None:
    with pytest.raises(InputError, match=r"fidelity 0\.0"):
        generate_cases(42, limit=1, fidelity=0.0)


def test_limit_keeps_the_strata_in_proportion() -> None:
    every = slots(42)
    sample = subset(every, 30)
    assert len(sample) == 30
    assert Counter(s.domain for s in sample) == {"shopping": 10, "travel": 10,
                                                 "customer_support": 10}
    multi = sum(1 for s in sample if s.n_faults > 1)
    assert multi == round(30 * sum(1 for s in every if s.n_faults > 1) / len(every))
    assert len({s.primary for s in subset(every, 10)}) == 4


def fact(entity: str, key: str, value: str, ts: int, from_step: bool) -> FactSource:
    return FactSource(entity, key, value, ts, from_step, ts, f"{'s' if from_step else 'm'}_{ts}")


def test_memory_first_answers_from_memory_and_falls_back_to_the_conversation() -> None:
    said = fact("user", "budget", "$170", 9, True)          # newer, but only said
    saved = fact("user", "budget", "$150", 5, False)        # what memory holds
    ask = {"fn": "lookup", "args": {"entity_id": "user", "fact_key": "budget"}}
    assert evaluate(ask, Context([said, saved])) == "$170"  # newest wins
    assert evaluate(memory_first(ask), Context([said, saved])) == "$150"
    assert evaluate(memory_first(ask), Context([said])) == "$170"  # memory emptied
    cheapest = memory_first({"fn": "argmin", "args": {"fact_key": "price", "entities": None}})
    assert evaluate(cheapest, Context([fact("a", "price", "$5", 3, True),
                                       fact("b", "price", "$9", 2, False)])) == "b"


def test_answerable_sessions_state_what_they_save_and_ask_memory_first() -> None:
    (plain,) = generate_cases(42, limit=1)
    (answerable,) = generate_cases(42, limit=1, answerable=1.0)
    answers = [s for s in answerable.trace if s.step_type is StepType.FINAL_ANSWER]
    assert any(s.facts for s in answers[:-1]) and not any(
        s.facts for s in plain.trace if s.step_type is StepType.FINAL_ANSWER)
    assert '"memory_first"' in json.dumps(answers[-1].derivation)
    assert answerable.evaluation is not None and plain.evaluation is not None
    assert answerable.evaluation.required_facts == plain.evaluation.required_facts
    assert manifest([plain, answerable], 42)["answerable_cases"] == 1


def test_a_fault_value_left_in_an_echo_is_a_recurrence(levels: dict[float, list[Case]]) -> None:
    case = next(c for c in levels[0.6] if echoes(c) and fact_probes(c))
    deleted = set(case.diagnosed_faults)

    def repaired(removed: set[str]) -> list[MemoryRecord]:
        return [m.model_copy(update={"status": MemoryStatus.DELETED}) if m.memory_id in removed
                else m for m in case.memory_store]
    recurred, detail = fact_recurrence(case, repaired(deleted))
    assert recurred is True and echoes(case)[0] in detail
    assert fact_recurrence(case, repaired(deleted | set(echoes(case)))) == (False, "ok")
    assert fact_recurrence(case, repaired(set()))[0] is True  # nothing removed at all
