"""The replay-noise model (benchmark/noise.py): seeded per (seed, case, step), the same draw
for every method; each kind of disagreement does what it says, and recovery then depends on
the facts, not the wording."""

from __future__ import annotations

import random

from provrepair.benchmark.metrics import recovered
from provrepair.benchmark.noise import KINDS, NoisyReasoner, disagree, wrong
from provrepair.provenance.models import ExecutionStep, Fact
from provrepair.repair.derive import Context
from provrepair.repair.reasoners.base import StepOutput, StepRequest

FACT = Fact(entity_id="P1", fact_key="price", fact_value="$12.34")
OUTPUT = StepOutput(content="Best offer: StoreA at $12.34", facts=[FACT])


class Fixed:
    name = "fixed"

    def regenerate(self, request: StepRequest) -> StepOutput:
        return OUTPUT


def request(step_id: str) -> StepRequest:
    step = ExecutionStep(step_id=step_id, task_id="t", step_type="claim", content="x",
                         timestamp=1, turn=1, prev_step_ids=[], next_step_ids=[], used_ids=[],
                         sufficient_ids=[], invalidated_memory_ids=[], generated_memory_ids=[])
    return StepRequest(step=step, domain="shopping", context=Context(facts=[]), inputs=[],
                       memories=[], steps=[])


def test_rate_zero_is_the_reasoner_itself() -> None:
    noisy = NoisyReasoner(Fixed(), 0.0, 42).for_case("c1")
    assert noisy.name == "fixed"
    assert all(noisy.regenerate(request(f"s_{i}")) is OUTPUT for i in range(50))


def test_draws_are_seeded_by_seed_case_and_step() -> None:
    def outcomes(seed: int, case: str) -> list[str | None]:
        noisy = NoisyReasoner(Fixed(), 0.3, seed).for_case(case)
        return [noisy.regenerate(request(f"s_{i}")).content for i in range(60)]
    assert outcomes(42, "c1") == outcomes(42, "c1")
    assert outcomes(42, "c1") != outcomes(7, "c1") and outcomes(42, "c1") != outcomes(42, "c2")
    changed = sum(c != OUTPUT.content for c in outcomes(42, "c1"))
    assert 5 <= changed <= 35  # about 30% of 60
    assert NoisyReasoner(Fixed(), 0.05, 42).name == "fixed+noise0.05@42"


def test_each_kind_of_disagreement() -> None:
    rng = random.Random(0)
    para = disagree(OUTPUT, "paraphrase", rng, ["$12.34"])
    assert para.content != OUTPUT.content and para.facts == OUTPUT.facts
    assert recovered(para.content, ["$12.34", "StoreA"])  # judged by facts, not wording
    bad = disagree(OUTPUT, "wrong_value", rng, ["$12.34"])
    assert bad.facts and bad.facts[0].fact_value == "$13.34" and "$12.34" not in (bad.content or "")
    assert not recovered(bad.content, ["$12.34"])
    gone = disagree(OUTPUT, "omit_fact", rng, ["$12.34"])
    assert gone.facts == [] and "$12.34" not in (gone.content or "")
    assert set(KINDS) == {"paraphrase", "wrong_value", "omit_fact"}


def test_a_wrong_value_never_contains_the_right_one() -> None:
    for value in ("30 days", "$182.99", "F0028", "shipped", "Qantas", "9"):
        assert value not in wrong(value) and wrong(value) != value
