"""One benchmark case from one slot: run the session clean, inject faults chosen from the
clean run, re-run it under them, keep the case only if the faults matter, label it by diff.

Every random choice comes from `random.Random(f"{seed}:{task_id}:{attempt}")`, so a seed
always yields the same cases. An attempt that cannot satisfy the slot (no fault of the
wanted type changes the final answer, or the store size misses the slot's bin) is retried
with the next attempt's variant.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from provrepair.benchmark import labels
from provrepair.benchmark.domains import BUILDERS
from provrepair.benchmark.domains.common import fillers
from provrepair.benchmark.fidelity import stream, with_recording_errors, with_unrecorded_flow
from provrepair.benchmark.inject import Fault, candidates, injection
from provrepair.benchmark.lookalikes import with_lookalikes
from provrepair.benchmark.quotas import Slot
from provrepair.benchmark.runtime import Run, run_session
from provrepair.benchmark.scripts import Seed, Session
from provrepair.provenance.errors import InternalError
from provrepair.provenance.models import Case
from provrepair.provenance.validate import validate_case
from provrepair.provenance.vocab import FaultType, StepType

ATTEMPTS = 60
KINDS = list(FaultType)


class GenerationError(InternalError):
    """No variant satisfied a slot within the attempt budget (a bug in a domain builder)."""


@dataclass
class Outcome:
    clean: Run
    faulty: Run
    faults: list[Fault]


def build_case(slot: Slot, seed: int, fidelity: float = 1.0, answerable: float = 0.0) -> Case:
    recording = Recording(seed, fidelity, answerable)
    for attempt in range(ATTEMPTS):
        case = _attempt(slot, seed, attempt, recording)
        if case is not None:
            return case
    raise GenerationError(f"{slot.task_id}: no variant in {ATTEMPTS} attempts fits {slot}")


def _attempt(slot: Slot, seed: int, attempt: int, recording: Recording) -> Case | None:
    """One variant; if its store is smaller than the slot's bin, the same variant again with
    background records added (they change nothing else: no request ever retrieves them)."""
    low, high = slot.bounds
    rich = _richness(low, attempt)
    case = _variant(slot, seed, attempt, rich, [], recording)
    if case is not None and labels.benign_active(case) < low:
        rng = random.Random(f"{seed}:{slot.task_id}:{attempt}:fill")
        wanted = rng.randint(low, high if high is not None else low + 3)
        case = _variant(slot, seed, attempt, rich,
                        fillers(rng, wanted - labels.benign_active(case)), recording)
    upper = high if high is not None else 10**6
    if case is None or not low <= labels.benign_active(case) <= upper:
        return None
    return case


def _richness(low: int, attempt: int) -> int:
    """How much profile and note-taking a session has, by the store size it must reach
    (fillers top it up); attempts cycle through the levels that can reach it."""
    ladder = {0: [0, 0, 0], 6: [0, 1, 0], 9: [1, 2, 0], 12: [2, 1, 2]}
    return ladder[low][attempt % 3]


def _variant(slot: Slot, seed: int, attempt: int, rich: int, extra: list[Seed],
             recording: Recording) -> Case | None:
    rng = random.Random(f"{seed}:{slot.task_id}:{attempt}")
    session = BUILDERS[slot.domain](rng, rich)
    session.seeds.extend(extra)
    session.answerable = recording.is_answerable(slot.task_id)
    clean = run_session(session, slot.task_id)
    if not all(clean.answers):
        return None
    outcome = _inject(slot, session, clean, rng)
    return None if outcome is None else assemble(slot, outcome, recording)


def _inject(slot: Slot, session: Session, clean: Run, rng: random.Random) -> Outcome | None:
    kinds = [slot.primary, *_extra_kinds(slot, rng)]
    chosen: list[Fault] = []
    faulty = clean
    for kind in kinds:
        picked = _pick(kind, slot, session, (clean, faulty), chosen, rng)
        if picked is None:
            return None
        chosen, faulty = picked
    return Outcome(clean, faulty, chosen)


def _extra_kinds(slot: Slot, rng: random.Random) -> list[FaultType]:
    return [rng.choice(KINDS) for _ in range(slot.n_faults - 1)]


def _pick(kind: FaultType, slot: Slot, session: Session, runs: tuple[Run, Run],
          chosen: list[Fault], rng: random.Random) -> tuple[list[Fault], Run] | None:
    """The first candidate of this kind that, added to the chosen faults, keeps the case and
    changes what the agent did (beyond retrieval) compared with the run without it."""
    clean, before = runs
    for fault in candidates(kind, clean, session.strangers, rng):
        fault = _numbered(fault, chosen)
        if _conflicts(fault, chosen):
            continue
        trial = [*chosen, fault]
        faulty = run_session(session, slot.task_id, injection(trial))
        if effective(clean, faulty, trial) and _changes_work(before, faulty, fault):
            return trial, faulty
    return None


def _changes_work(before: Run, after: Run, fault: Fault) -> bool:
    """Some step downstream of the fault, other than a memory read, has other content, facts
    or tool call than in the run without it."""
    old = {s.step_id: labels.step_signature(s) for s in before.sink.steps}
    return any(old.get(s.step_id) != labels.step_signature(s) for s in after.sink.steps
               if s.step_type is not StepType.MEMORY_READ and s.step_id != fault.step)


def _numbered(fault: Fault, chosen: list[Fault]) -> Fault:
    """Wrong-user records are m_f000, m_f001, ... in the order they are injected."""
    if fault.fault_type is not FaultType.WRONG_USER:
        return fault
    count = sum(1 for f in chosen if f.fault_type is FaultType.WRONG_USER)
    return Fault(fault.fault_type, f"m_f{count:03d}", stranger=fault.stranger)


def _conflicts(fault: Fault, chosen: list[Fault]) -> bool:
    for other in chosen:
        if fault.target == other.target or (fault.step is not None and fault.step == other.step):
            return True
        if fault.stranger is not None and fault.stranger == other.stranger:
            return True
    return False


def effective(clean: Run, faulty: Run, faults: list[Fault]) -> bool:
    """Keep a case only if the injection changes the final answer (so that the answer no
    longer holds every required fact) and every fault has a downstream effect."""
    if not all(faulty.answers):
        return False
    clean_case, faulty_case = clean.sink.case(), faulty.sink.case()
    if not labels.aligned(clean_case, faulty_case):
        return False
    required = clean.final_values
    answer = labels.final_answer(faulty_case)
    if not required or answer == labels.final_answer(clean_case) or \
            labels.contains_all(answer, required):
        return False
    return all(_used_downstream(faulty_case, f) for f in faults)


def _used_downstream(case: Case, fault: Fault) -> bool:
    """Some step after the fault took effect read the faulty record (a stale record's reads
    before its failed mutation were legitimate)."""
    steps = {s.step_id: s for s in case.trace}
    memory = next(m for m in case.memory_store if m.memory_id == fault.faulty_id)
    since = steps[fault.step].timestamp if fault.fault_type is FaultType.STALE and fault.step \
        else memory.created_at
    return any(fault.faulty_id in s.used_ids and s.timestamp > since for s in case.trace)


@dataclass(frozen=True)
class Recording:
    """How faithfully the case is recorded (benchmark/fidelity.py; 1.0 = exactly), and
    the share of sessions whose final question can fall back to the conversation."""

    seed: int
    fidelity: float = 1.0
    answerable: float = 0.0

    def is_answerable(self, task_id: str) -> bool:
        """Drawn per case from its own stream: the same cases at every fidelity level."""
        return random.Random(f"{self.seed}:{task_id}:answerable").random() < self.answerable


def assemble(slot: Slot, outcome: Outcome, recording: Recording = Recording(0)) -> Case:
    clean_case = outcome.clean.sink.case()
    faulty_ids = [f.faulty_id for f in outcome.faults]
    outcome.faulty.sink.faults(faulty_ids)
    faulty_case = outcome.faulty.sink.case()
    leaks: dict[str, str] = {}
    if recording.fidelity < 1.0:
        faulty_case, leaks = with_unrecorded_flow(faulty_case, faulty_ids, recording.fidelity,
                                                  stream(recording.seed, slot.task_id, "flow"))
    kinds = {f.faulty_id: f.fault_type for f in outcome.faults}
    store = [m.model_copy(update={"fault_type": kinds[m.memory_id]}) if m.memory_id in kinds
             else m for m in faulty_case.memory_store]
    faulty_case = faulty_case.model_copy(update={"memory_store": store})
    manifest = [f.manifest(clean_case) for f in outcome.faults]
    evaluation = labels.evaluation(clean_case, faulty_case, faulty_ids,
                                   list(dict.fromkeys(outcome.clean.final_values)), manifest,
                                   slot.primary, leaks)
    case = faulty_case.model_copy(update={"evaluation": evaluation})
    if recording.fidelity < 1.0:
        case = with_recording_errors(case, recording.fidelity,
                                     stream(recording.seed, slot.task_id, "record"))
    case = with_lookalikes(case, faulty_ids, recording.fidelity,
                           stream(recording.seed, slot.task_id, "lookalikes"))
    return validate_case(case)
