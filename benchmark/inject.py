"""Manifest-driven fault injection (the paper's injection appendix).

A fault is chosen from the CLEAN run and turned into an `Injection` for the faulty run:
- poisoned: a memory produced by a `memory_write`; its producer's output is corrupted (the
  record gets the faulty id `m_f` + its slot, keeps its time and source);
- summary_drift: the same on a derived memory (an update or consolidation output);
- stale: a single-record delete/update/consolidate does not take effect: the consumed record
  stays active and the new lineage is never written;
- wrong_user: another user's record (source `injected`) inserted at the start of the timeline.
The injector never runs the planner; the faulty run re-executes the session under the faults.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from provrepair.benchmark.runtime import Corruption, Injection, Run
from provrepair.benchmark.scripts import Seed
from provrepair.provenance.models import Case, ExecutionStep, MemoryRecord
from provrepair.provenance.vocab import FaultType, StepType

MONEY = re.compile(r"\$(\d[\d,]*(?:\.\d\d)?)")
DAYS = re.compile(r"\b(\d+) days\b")
VOCAB = [
    ["economy", "premium economy", "business", "first"],
    ["aisle", "window", "middle"],
    ["ANA", "Qantas", "Lufthansa", "Delta", "Emirates", "KLM", "United"],
    ["processing", "shipped", "delivered", "returned", "cancelled"],
    ["email", "phone", "sms", "chat"],
    ["black", "red", "white", "blue", "green"],
    ["refund", "replacement", "store credit"],
    ["open", "pending", "resolved"],
    ["low", "medium", "high", "urgent"],
    ["StoreA", "StoreB", "StoreC", "StoreD", "StoreE"],
]
PRODUCERS = {FaultType.POISONED: {StepType.MEMORY_WRITE},
             FaultType.SUMMARY_DRIFT: {StepType.MEMORY_UPDATE, StepType.MEMORY_CONSOLIDATE}}
STALE_CONSUMERS = {StepType.MEMORY_DELETE: "delete", StepType.MEMORY_UPDATE: "update",
                   StepType.MEMORY_CONSOLIDATE: "consolidate"}


@dataclass(frozen=True)
class Fault:
    fault_type: FaultType
    target: str                      # the clean record (or the injected id for wrong_user)
    step: str | None = None          # producer (poisoned, drift) or consumer (stale)
    corruption: Corruption | None = None
    key: str = ""                    # the failed mutation's script key (stale)
    stranger: Seed | None = None     # the other user's record (wrong_user)

    @property
    def faulty_id(self) -> str:
        if self.fault_type in (FaultType.POISONED, FaultType.SUMMARY_DRIFT):
            return "m_f" + self.target.removeprefix("m_")
        return self.target

    def manifest(self, clean: Case) -> dict[str, Any]:
        entry: dict[str, Any] = {"fault_type": self.fault_type.value, "target": self.target}
        if self.corruption is not None:
            entry.update(producer_step=self.step, faulty_id=self.faulty_id,
                         original_value=self.corruption.old,
                         corrupted_value=self.corruption.new)
        if self.fault_type is FaultType.STALE:
            consumer = next(s for s in clean.trace if s.step_id == self.step)
            entry.update(consumer_step=self.step, operation=STALE_CONSUMERS[consumer.step_type],
                         removed=list(consumer.generated_memory_ids))
        if self.stranger is not None:
            entry.update(content=self.stranger.content,
                         fact={"entity_id": self.stranger.entity_id,
                               "fact_key": self.stranger.fact_key,
                               "fact_value": self.stranger.fact_value})
        return entry


def injection(faults: list[Fault]) -> Injection:
    """Apply the faults in listed order, merged into one faulty instance."""
    out = Injection()
    for fault in faults:
        if fault.corruption is not None and fault.step is not None:
            out.corrupt[fault.step] = fault.corruption
            out.renames[fault.target] = fault.faulty_id
        elif fault.fault_type is FaultType.STALE:
            out.failed.add(fault.key)
        elif fault.stranger is not None:
            out.roots.append((fault.target, fault.stranger))
    return out


# -- candidates from the clean run --------------------------------------------------------------

def candidates(kind: FaultType, clean: Run, strangers: list[Seed],
               rng: random.Random) -> Iterator[Fault]:
    """Every fault of this type the clean run admits, in a seeded random order."""
    case = clean.sink.case()
    if kind is FaultType.WRONG_USER:
        found = [Fault(kind, "m_f000", stranger=s) for s in strangers]
    elif kind is FaultType.STALE:
        found = list(_stale(case, clean.agent.mutation_keys))
    else:
        found = list(_corruptible(kind, case, rng))
    rng.shuffle(found)
    yield from found


def _corruptible(kind: FaultType, case: Case, rng: random.Random) -> Iterator[Fault]:
    memories = {m.memory_id: m for m in case.memory_store}
    needed = answer_ancestry(case)
    for step in case.trace:
        if step.step_type not in PRODUCERS[kind] or len(step.generated_memory_ids) != 1:
            continue
        record = memories[step.generated_memory_ids[0]]
        if record.memory_id not in needed or record.fact_value is None:
            continue
        if kind is FaultType.SUMMARY_DRIFT and not record.derived_from:
            continue  # drift corrupts a summary: a record derived from others
        for new in corruptions(record.fact_value, rng):
            yield Fault(kind, record.memory_id, step.step_id, Corruption(record.fact_value, new))


def _stale(case: Case, keys: dict[str, str]) -> Iterator[Fault]:
    for step in case.trace:
        if step.step_type in STALE_CONSUMERS and len(step.invalidated_memory_ids) == 1:
            yield Fault(FaultType.STALE, step.invalidated_memory_ids[0], step.step_id,
                        key=keys[step.step_id])


def answer_ancestry(case: Case) -> set[str]:
    """Memory ids the last final answer depends on in the clean run (through used ids,
    producers, derivation and consumed records)."""
    finals = [s for s in case.trace if s.step_type is StepType.FINAL_ANSWER]
    if not finals:
        return set()
    steps = {s.step_id: s for s in case.trace}
    memories = {m.memory_id: m for m in case.memory_store}
    producer = {m: s.step_id for s in case.trace for m in s.generated_memory_ids}
    seen: set[str] = set()
    todo = [finals[-1].step_id]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        todo.extend(_parents(node, steps, memories, producer))
    return {n for n in seen if n in memories}


def _parents(node: str, steps: dict[str, ExecutionStep], memories: dict[str, MemoryRecord],
             producer: dict[str, str]) -> list[str]:
    if node in steps:
        step = steps[node]
        return [*step.used_ids, *step.invalidated_memory_ids]
    if node in memories:
        return [*memories[node].derived_from, *([producer[node]] if node in producer else [])]
    return []


def corruptions(value: str, rng: random.Random) -> list[str]:
    """Deterministic domain corruptions of a value (or of one value inside a composite such
    as "StoreC at $63.99"): numeric shifts of an amount, or a swap within a vocabulary."""
    out: list[str] = []
    money = MONEY.search(value)
    if money:
        amount = float(money.group(1).replace(",", ""))
        shifts = [round(rng.uniform(0.18, 0.45) * amount, 2),
                  -round(rng.uniform(0.12, 0.3) * amount, 2)]
        out += [value.replace(money.group(0), f"${amount + s:,.2f}") for s in shifts
                if amount + s > 1]
    days = DAYS.search(value)
    if days:
        out += [value.replace(days.group(0), f"{d} days") for d in (14, 30, 45, 60, 90)
                if d != int(days.group(1))][:2]
    out += _vocabulary_swaps(value, rng)
    return out


def _vocabulary_swaps(value: str, rng: random.Random) -> list[str]:
    for words in VOCAB:
        for word in sorted(words, key=len, reverse=True):  # "premium economy" before "economy"
            if re.search(rf"\b{re.escape(word)}\b", value):
                others = [w for w in words if w != word]
                rng.shuffle(others)
                return [re.sub(rf"\b{re.escape(word)}\b", w, value, count=1) for w in others[:2]]
    return []
