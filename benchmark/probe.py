"""The recurrence probes (paper App. E; docs/paper-notes.md §6, §9 A16; docs/benchmark.md).

The question probe: a fresh runtime that holds only the repaired store re-runs the last user
input. The fact probes (`fact_recurrence`), generated with the case: for each diagnosed fault
that states a fact, the follow-up question "what is <entity>'s <key>?" asked of the repaired
store alone; the fault's own value coming back (the fault, or a copy no recorded edge
reaches, survived) is a recurrence.

The probe case: the last turn's user input(s) and the last turn's recorded steps (the
agent's program for that input: derivations, tool calls), and the repaired memory store —
only its active records are visible (inactive ones are kept solely so that a retrieval of
a removed id resolves through the remapping to its replacement, §9 A7). Timestamps are
renumbered so that every loaded memory predates the re-run, in their original order. No
earlier step is visible (clear state). Every step is replayed by the shared executor with
the run's reasoner, without early cutoff; the recorded answer is never reused.

Outcome: True — the answer fails the oracle (recurrence; an unresolved answer fails it);
False — it passes; None — undecided (the probe errored, needed a human for a side effect,
or the last turn has no final answer), excluded from both counts (§9 A16).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from provrepair.benchmark.methods.common import build_plan, last_turn
from provrepair.benchmark.metrics import recovered, wrong_answer_values, wrong_facts
from provrepair.provenance.errors import ProvrepairError
from provrepair.provenance.models import Case, MemoryRecord
from provrepair.provenance.state.runs import ReportStatus
from provrepair.provenance.vocab import MemoryStatus, StepType
from provrepair.repair.plan.values import same_value
from provrepair.repair.reasoners.base import Reasoner
from provrepair.repair.replay.executor import Executor
from provrepair.repair.tools.packs import domain_functions, domain_tools
from provrepair.repair.tools.registry import ToolRegistry


def probe_case(case: Case, memories: list[MemoryRecord]) -> Case:
    turn = last_turn(case)
    inputs = [u for u in case.session if u.turn == turn]
    steps = [s for s in case.trace if s.turn == turn]
    ordered = sorted(enumerate(memories), key=lambda p: (p[1].created_at, p[0]))
    loaded = [m.model_copy(update={"created_at": i + 1, "last_modified_at": i + 1})
              for i, (_, m) in enumerate(ordered)]
    start = len(loaded) + 1
    return case.model_copy(update={
        "session": [u.model_copy(update={"timestamp": start}) for u in inputs],
        "memory_store": loaded, "evaluation": None,
        "trace": [s.model_copy(update={"timestamp": start + 1 + i}) for i, s in enumerate(steps)]})


def remap_to_active(memories: list[MemoryRecord],
                    successors: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """Removed record → the active record that replaces it (through the remapping chain)."""
    active = {m.memory_id for m in memories if m.status is MemoryStatus.ACTIVE}

    def find(memory_id: str, seen: set[str]) -> str | None:
        for new in successors.get(memory_id, ()):
            if new in seen:
                continue
            seen.add(new)
            hit = new if new in active else find(new, seen)
            if hit is not None:
                return hit
        return None

    out = {}
    for m in memories:
        if m.memory_id not in active and (hit := find(m.memory_id, {m.memory_id})) is not None:
            out[m.memory_id] = hit
    return out


def recurrence_probe(case: Case, memories: list[MemoryRecord],
                     successors: Mapping[str, tuple[str, ...]], reasoner: Reasoner,
                     required_facts: list[str]) -> tuple[bool | None, str]:
    """(recurred, detail): detail is ok | wrong_answer | unresolved_answer (both recurred) |
    no_final_answer | needs_human | error (undecided)."""
    probe = probe_case(case, memories)
    if not any(s.step_type is StepType.FINAL_ANSWER for s in probe.trace):
        return None, "no_final_answer"
    plan = build_plan(probe, task_id=probe.task_id, replay=[s.step_id for s in probe.trace])
    tools = ToolRegistry(probe.tools, probe.world, domain_tools(probe.domain))
    executor = Executor(probe, plan, reasoner, tools, "probe", early_cutoff=False,
                        functions=domain_functions(probe.domain))
    executor.state.memory_remap.update(remap_to_active(memories, successors))
    try:
        result = executor.run()
    except ProvrepairError as exc:
        return None, f"error: {type(exc).__name__}"
    if result.needs_human:
        return None, ReportStatus.NEEDS_HUMAN.value
    if recovered(result.answer, required_facts, wrong_answer_values(case)):
        return False, "ok"
    return True, "unresolved_answer" if result.answer is None else "wrong_answer"


@dataclass(frozen=True)
class FactProbe:
    """A follow-up question generated with the case: "what is <entity>'s <key>?", asked of
    the repaired store alone. `wrong` is the value the fault states."""

    entity_id: str
    fact_key: str
    wrong: str


def fact_probes(case: Case) -> list[FactProbe]:
    """One per diagnosed fault stating a fact that no active record of the clean run holds
    (metrics.wrong_facts)."""
    return [FactProbe(*fact) for fact in wrong_facts(case)]


def fact_recurrence(case: Case, memories: list[MemoryRecord]) -> tuple[bool | None, str]:
    """(recurred, detail): True when an active record of the repaired store still states a
    fault's value for that entity and key — the fault itself, or a copy no recorded edge
    reaches — so a later question retrieving it may read it again, whatever newer value
    sits beside it. None when no fault states such a fact."""
    probes = fact_probes(case)
    if not probes:
        return None, "no_fact_probe"
    active = [m for m in memories if m.status is MemoryStatus.ACTIVE]
    back = sorted({m.memory_id for p in probes for m in active
                   if (m.entity_id, m.fact_key) == (p.entity_id, p.fact_key)
                   and same_value(m.fact_value, p.wrong)})
    return (True, "fault_value_active: " + ", ".join(back)) if back else (False, "ok")
