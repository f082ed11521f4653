"""Provenance fidelity: what a recorder of a real agent gets wrong (`bench generate
--fidelity F`; docs/benchmark.md). At F = 1.0 a case is recorded exactly as the runtime ran it
(the cases of earlier releases); below it, with probability p = 1 − F, independently:

- recall — an inference stage (claim, plan, tool action, final answer, memory mutation)
  loses each cited source from `used_ids` (and a derived record each `derived_from` entry);
- precision — such a stage cites one spurious earlier item it did not read;
- sufficiency — a stage's sufficiency flags are wrong: the ones it had are dropped, or a
  stage without one flags a cited item it does not follow from;
- unrecorded influence — a claim or plan downstream of a fault that does not cite it still
  repeats the faulty record's content, as an LLM reading its whole context does;
- echoes — a fault leaves its wrong value in a second record that no recorded edge reaches
  (a copy the memory layer made outside the recorder's view); a replay may read it again.

The first three change only what is recorded; the last two change what the faulty run holds,
and are applied before the gold labels are computed, which therefore see the true flow.
Draws come from one stream per case, the same at every level (a draw u fires when u < p), so
a lower fidelity degrades the same case by a superset of the higher level's errors.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from provrepair.provenance.models import Case, ExecutionStep, MemoryRecord
from provrepair.provenance.vocab import MUTATION_STEP_TYPES, StepType

INFERENCE = frozenset({StepType.CLAIM, StepType.PLAN, StepType.TOOL_ACTION,
                       StepType.FINAL_ANSWER, *MUTATION_STEP_TYPES})
LEAKY = frozenset({StepType.CLAIM, StepType.PLAN})


def stream(seed: int, task_id: str, part: str) -> random.Random:
    return random.Random(f"{seed}:{task_id}:fidelity:{part}")


def with_unrecorded_flow(case: Case, faults: Iterable[str], fidelity: float,
                         rng: random.Random) -> tuple[Case, dict[str, str]]:
    """Echo records and content leaks, before the gold labels (they are part of the run);
    and the leaks' true flow, leaked step → the fault it read (no recorded edge says so, the
    gold labels need it: labels.true_flow)."""
    p = 1.0 - fidelity
    memories = {m.memory_id: m for m in case.memory_store}
    faulty = [memories[f] for f in faults if f in memories]
    echoes = [_echo(m, i) for i, m in enumerate(faulty) if rng.random() < p]
    leaks: dict[str, str] = {}
    trace = [_leak(step, faulty, rng, p, leaks) for step in case.trace]
    return case.model_copy(update={"memory_store": [*case.memory_store, *echoes],
                                   "trace": trace}), leaks


def _echo(fault: MemoryRecord, index: int) -> MemoryRecord:
    return fault.model_copy(update={
        "memory_id": f"m_e{index:03d}", "derived_from": [], "sufficient_from": [],
        "supersedes": None, "last_modified_by": None, "fault_type": None,
        "last_modified_at": fault.created_at, "status": fault.status})


def _leak(step: ExecutionStep, faulty: list[MemoryRecord], rng: random.Random,
          p: float, leaks: dict[str, str]) -> ExecutionStep:
    u, pick = rng.random(), rng.random()
    seen = [m for m in faulty if m.created_at < step.timestamp and m.memory_id not in step.used_ids]
    if step.step_type not in LEAKY or not seen or u >= p:
        return step
    source = seen[int(pick * len(seen))]
    leaks[step.step_id] = source.memory_id
    return step.model_copy(update={"content": f"{step.content} (as noted: {source.content})"})


def with_recording_errors(case: Case, fidelity: float, rng: random.Random) -> Case:
    """Recall, precision and sufficiency errors in the recorded edges (after the labels)."""
    p = 1.0 - fidelity
    earlier = sorted([(s.timestamp, s.step_id) for s in case.trace] +
                     [(m.created_at, m.memory_id) for m in case.memory_store])
    trace = [_recorded(s, earlier, rng, p) for s in case.trace]
    store = [_derived(m, rng, p) for m in case.memory_store]
    return case.model_copy(update={"trace": trace, "memory_store": store})


def _recorded(step: ExecutionStep, earlier: list[tuple[int, str]], rng: random.Random,
              p: float) -> ExecutionStep:
    if step.step_type not in INFERENCE:
        return step
    used = [u for u in step.used_ids if rng.random() >= p]
    extra, pick = rng.random(), rng.random()
    before = [n for ts, n in earlier if ts < step.timestamp and n not in used
              and n not in step.generated_memory_ids]
    if extra < p and before:
        used.append(before[int(pick * len(before))])
    sufficient = [s for s in step.sufficient_ids if s in used]
    flip, pick = rng.random(), rng.random()
    if flip < p:
        sufficient = [] if sufficient else ([used[int(pick * len(used))]] if used else [])
    return step.model_copy(update={"used_ids": used, "sufficient_ids": sufficient})


def _derived(memory: MemoryRecord, rng: random.Random, p: float) -> MemoryRecord:
    derived = [d for d in memory.derived_from if rng.random() >= p]
    sufficient = [s for s in memory.sufficient_from if s in derived]
    return memory.model_copy(update={"derived_from": derived, "sufficient_from": sufficient})
