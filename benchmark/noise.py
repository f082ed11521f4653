"""A replayer that is not the generator: the engine's offline reasoner, wrapped with a seeded
model of how a real model disagrees with its earlier self when it regenerates a step.

The cases are produced by the same deterministic derivations the offline reasoner replays,
so without noise every replayed step comes out character-identical to the clean run and
replaying *everything* costs nothing: the benchmark cannot tell selective replay from
replaying all. With `--replay-noise r`, each regenerated step (claims, plans, answers, tool
actions, memory mutations; memory reads re-run retrieval and are not asked) disagrees with
chance r, in one of three ways drawn with equal odds:

    paraphrase   the same facts in other words (the content changes, no value does)
    wrong_value  one value the step states is replaced by a wrong one (in its facts and text)
    omit_fact    one value the step states is left out (from its facts and text)

A paraphrase is harmless to the answer but breaks early cutoff downstream (the step is no
longer "unchanged"); a wrong or omitted value propagates through the derivations that read
it. Recovery is judged by the case's required facts (metrics.recovered), never by identity
with the clean text, so a paraphrased answer that keeps its facts is recovered.

Draws are seeded by (seed, case, step): every method meets the same disagreement on the same
step (common random numbers), so methods differ only by what they choose to replay. Noise is
applied at repair time only; recurrence probes ask the noise-free reasoner.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, replace
from typing import Any

from provrepair.provenance.models import Fact
from provrepair.repair.reasoners.base import Reasoner, StepOutput, StepRequest

KINDS = ("paraphrase", "wrong_value", "omit_fact")
NUMBER = re.compile(r"\d+(?:\.\d+)?")
WRONG_WORD = "unconfirmed"


def check_noise(rate: float) -> float:
    from provrepair.provenance.errors import InputError

    if not 0.0 <= rate <= 1.0:
        raise InputError(f"--replay-noise {rate}: a rate between 0 and 1")
    return rate


@dataclass
class NoisyReasoner:
    """`inner` with per-step disagreement at `rate`; `for_case` binds the case whose steps it
    regenerates (the seed of the draws)."""

    inner: Reasoner
    rate: float
    seed: int = 0
    case: str = ""
    name: str = field(init=False)  # results of another rate never count as this run's

    def __post_init__(self) -> None:
        self.name = self.inner.name if self.rate == 0 else f"{self.inner.name}+noise{self.rate:g}@{self.seed}"

    @property
    def model(self) -> str | None:
        return getattr(self.inner, "model", None)

    def for_case(self, case: str) -> NoisyReasoner:
        return replace(self, case=case)

    def regenerate(self, request: StepRequest) -> StepOutput:
        output = self.inner.regenerate(request)
        if self.rate == 0 or output.content is None or output.tool_call is not None:
            return output  # a tool call is re-issued as recorded; its result is the world's
        rng = random.Random(f"{self.seed}:{self.case}:{request.step.step_id}")
        if rng.random() >= self.rate:
            return output
        kind = KINDS[rng.randrange(len(KINDS))]
        return disagree(output, kind, rng, stated_values(output, request))


def stated_values(output: StepOutput, request: StepRequest) -> list[str]:
    """The values the step states: its own facts' values, or visible fact values its text
    contains (an answer states the facts it read without carrying them)."""
    text = output.content or ""
    own = [str(f.fact_value) for f in output.facts or [] if f.fact_value is not None]
    seen = own or [str(f.value) for f in request.context.facts if f.value is not None]
    return sorted({v for v in seen if v.strip() and v in text}, key=lambda v: (-len(v), v))


def disagree(output: StepOutput, kind: str, rng: random.Random, values: list[str]) -> StepOutput:
    content = output.content or ""
    if kind == "paraphrase" or not values:
        note = "replay noise: paraphrase"
        return replace(output, content=paraphrase(content), notes=[*output.notes, note])
    value = values[rng.randrange(len(values))]
    new = wrong(value) if kind == "wrong_value" else ""
    facts = _facts(output.facts, value, None if kind == "omit_fact" else new)
    text = " ".join(content.replace(value, new).split())
    return replace(output, content=text, facts=facts,
                   notes=[*output.notes, f"replay noise: {kind} {value!r}"])


def paraphrase(text: str) -> str:
    return f"In other words: {text}" if text else text


def wrong(value: str) -> str:
    """A different value of the same shape: the last number moved, else a wrong word (never a
    string that still contains the right value)."""
    numbers = list(NUMBER.finditer(value))
    if numbers:
        last = numbers[-1]
        digits = last.group()
        bumped = (f"{float(digits) + 1:.{len(digits.split('.')[1])}f}" if "." in digits
                  else str(int(digits) + 1))
        return value[:last.start()] + bumped + value[last.end():]
    return WRONG_WORD


def _facts(facts: list[Fact] | None, value: str, new: str | None) -> list[Fact] | None:
    """The facts with `value` replaced by `new` (None: the fact left out)."""
    if facts is None:
        return None
    out: list[Fact] = []
    for fact in facts:
        if str(fact.fact_value) != value:
            out.append(fact)
        elif new is not None:
            out.append(fact.model_copy(update={"fact_value": _typed(fact.fact_value, new)}))
    return out


def _typed(old: Any, new: str) -> Any:
    if isinstance(old, bool) or not isinstance(old, int | float):
        return new
    try:
        return type(old)(new)
    except ValueError:
        return new
