"""Poisoning a mapped trajectory: k of the notes the final answer reads get a wrong value.

The injection is the controlled benchmark's poisoned fault (benchmark/inject.py, the paper's
App. C): the producing `memory_write` step's output is corrupted, the record gets the faulty
id `m_f…` and keeps its time and source, and the session is re-run under the faults, so every
later step that reads the record reads the wrong value. Candidates are the notes in the clean
final answer's ancestry (`inject.answer_ancestry`); a fault is kept only if it changes the
final answer beyond the faults chosen before it, so each of the k faults is read downstream
and matters. Wrong values keep the value's shape: an amount moved by 12–45 % (the generator's
own `inject.corruptions`), an order status or card brand swapped within the retail
vocabulary, a digit of an id or card number changed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

from provrepair.benchmark import labels
from provrepair.benchmark.build import effective
from provrepair.benchmark.inject import MONEY, Fault, answer_ancestry, corruptions, injection
from provrepair.benchmark.runtime import Corruption, Run, run_session
from provrepair.benchmark.scripts import Session
from provrepair.provenance.vocab import FaultType, StepType

RETAIL_VOCAB = [
    ["pending", "processed", "delivered", "cancelled"],
    ["visa", "mastercard", "amex", "discover"],
    ["paypal", "gift card"],
]
DIGITS = re.compile(r"\d")


def retail_corruptions(value: str, rng: random.Random) -> list[str]:
    """Up to two wrong values of the same shape as `value` (none if it has no such shape)."""
    if MONEY.search(value):
        return corruptions(value, rng)
    for words in RETAIL_VOCAB:
        for word in sorted(words, key=len, reverse=True):
            if re.search(rf"\b{re.escape(word)}\b", value):
                others = [w for w in words if w != word]
                rng.shuffle(others)
                return [re.sub(rf"\b{re.escape(word)}\b", w, value, count=1) for w in others[:2]]
    places = [m.start() for m in DIGITS.finditer(value)]
    if places:
        out = []
        for place in rng.sample(places, min(2, len(places))):
            digit = (int(value[place]) + rng.randint(1, 9)) % 10
            out.append(value[:place] + str(digit) + value[place + 1:])
        return out
    return []


def candidates(clean: Run, rng: random.Random) -> Iterator[Fault]:
    """Every poisoning of a note the clean final answer depends on, in a seeded order."""
    case = clean.sink.case()
    memories = {m.memory_id: m for m in case.memory_store}
    needed = answer_ancestry(case)
    found = []
    for step in case.trace:
        if step.step_type is not StepType.MEMORY_WRITE or len(step.generated_memory_ids) != 1:
            continue
        record = memories[step.generated_memory_ids[0]]
        # the corruption rewrites the value wherever the note's text has it: only a value the
        # text states once is a clean poisoning (never an id that contains it)
        if record.memory_id in needed and record.fact_value and \
                record.content.count(record.fact_value) == 1:
            found += [Fault(FaultType.POISONED, record.memory_id, step.step_id,
                            Corruption(record.fact_value, new))
                      for new in retail_corruptions(record.fact_value, rng)]
    rng.shuffle(found)
    yield from found


def poison(session: Session, task_id: str, clean: Run, k: int,
           rng: random.Random) -> tuple[list[Fault], Run] | None:
    """k faults on distinct notes, each changing the final answer beyond the ones chosen before
    it, the whole set kept by the generator's own test (`build.effective`: the final answer
    lacks a required fact and every fault is read downstream); None if the trajectory has no
    such k."""
    chosen: list[Fault] = []
    faulty = clean
    for fault in candidates(clean, rng):
        if len(chosen) == k:
            break
        if any(fault.target == c.target for c in chosen):
            continue
        trial = run_session(session, task_id, injection([*chosen, fault]))
        before = labels.final_answer(faulty.sink.case())
        if not all(trial.answers) or labels.final_answer(trial.sink.case()) == before:
            continue
        chosen, faulty = [*chosen, fault], trial
    if len(chosen) < k or not effective(clean, faulty, chosen):
        return None
    return chosen, faulty
