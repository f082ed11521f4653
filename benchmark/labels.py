"""Gold labels of one case, from the generator's knowledge of the run (never from the
recording a planner sees).

- The diff of the clean and the faulty run of one script: the same script gives every node
  the same id in both runs (benchmark/runtime.py), so a node is compared with its namesake;
  a step whose content, facts or tool call differ, or a memory whose content, fact or status
  differ, truly needs invalidation or re-derivation (`gold_affected_ids`).
- The true flow for the claims (`gold_affected_claim_ids`, claim F1's positives; issue 31):
  every claim of every turn that the faults reach through what the run truly read — the
  exact recording (before benchmark/fidelity.py's recording errors) plus the reads no edge
  records (content leaks) — under the spec's reach (§2: forward over the propagation edges,
  from each fault and its seed, no earlier than the seed), less the claims that reach keeps
  for independent trusted support on that same true flow (§3). That is the paper's G_c,
  "the claims requiring invalidation or re-derivation": a supported claim needs neither. A
  claim that read a fault counts even when its text came out the same; the diff alone
  missed those. CHOICE: with support counted, a planner that reads an exact recording gets
  F1 1.0 by construction (fidelity 1.0, no leaks); without it, the ablation without the
  support check would, and the support check (the paper's selectivity) would score as
  misses. The metric therefore measures what imperfect recording costs, not the method
  against itself at fidelity 1.0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from provrepair.benchmark.lookalikes import labelled
from provrepair.benchmark.reference import plan_in_memory
from provrepair.provenance.models import Case, Evaluation, ExecutionStep, FaultManifestEntry, MemoryRecord
from provrepair.provenance.order import final_answer_step
from provrepair.provenance.vocab import FaultType, MemoryStatus, StepType

SPACE = re.compile(r"\s+")


def final_answer(case: Case) -> str:
    """The content of v_final (provenance/order.py), "" when the trace has none."""
    final = final_answer_step(case)
    return final.content if final is not None else ""


def normalize(text: str) -> str:
    return SPACE.sub(" ", text).strip().casefold()


def contains_all(answer: str, facts: list[str]) -> bool:
    """docs/case-format.md, Evaluation: every fact, case-insensitive, white space collapsed."""
    return all(normalize(f) in normalize(answer) for f in facts)


def step_signature(step: ExecutionStep) -> tuple[object, ...]:
    facts = [(f.entity_id, f.fact_key, f.fact_value) for f in step.facts or []]
    return (step.step_type, step.content, facts, step.tool_name, step.tool_args, step.status)


def memory_signature(memory: MemoryRecord) -> tuple[object, ...]:
    return (memory.content, memory.source, memory.entity_id, memory.fact_key,
            memory.fact_value, memory.status)


def aligned(clean: Case, faulty: Case) -> bool:
    """Both runs have the same steps in the same order (same ids and types)."""
    return [(s.step_id, s.step_type) for s in clean.trace] == \
        [(s.step_id, s.step_type) for s in faulty.trace]


def changed_steps(clean: Case, faulty: Case) -> list[str]:
    before = {s.step_id: step_signature(s) for s in clean.trace}
    return [s.step_id for s in faulty.trace if before.get(s.step_id) != step_signature(s)]


def memory_partition(clean: Case, faulty: Case, faults: list[str]) -> tuple[list[str], list[str]]:
    """(changed, benign): memories of the faulty store that differ from their clean
    namesake (or have none), and those present and identical in both runs."""
    before = {m.memory_id: memory_signature(m) for m in clean.memory_store}
    changed: list[str] = []
    benign: list[str] = []
    for memory in faulty.memory_store:
        if memory.memory_id in faults:
            continue
        same = before.get(memory.memory_id) == memory_signature(memory)
        (benign if same else changed).append(memory.memory_id)
    return changed, benign


def true_flow(faulty: Case, faults: list[str], leaks: Mapping[str, str]) -> list[str]:
    """The nodes the faults reach through the true flow of the faulty run without
    independent trusted support there (§2 less §3: the plan's invalidated steps and its
    removed memories), in trace order of the steps then store order of the memories.
    `faulty` must be the run as recorded exactly (no recording errors yet); `leaks` (leaked
    step → the fault it repeats) are its reads no edge records, added as citations here
    only."""
    trace = [s.model_copy(update={"used_ids": [*s.used_ids, leaks[s.step_id]]})
             if s.step_id in leaks else s for s in faulty.trace]
    read = faulty.model_copy(update={"trace": trace, "evaluation": None})
    plan = plan_in_memory(read, faults)
    reached = {*plan["invalidate_claim_ids"], *plan["delete_memory_ids"],
               *plan["quarantine_memory_ids"]}
    return [n for n in [*(s.step_id for s in trace), *(m.memory_id for m in faulty.memory_store)]
            if n in reached]


def evaluation(clean: Case, faulty: Case, faults: list[str], required: list[str],
               manifest: list[dict[str, object]], primary: FaultType,
               leaks: Mapping[str, str] | None = None) -> Evaluation:
    """`faulty` as recorded exactly, with its unrecorded flow (`leaks`: fidelity.py)."""
    changed, benign = memory_partition(clean, faulty, faults)
    steps = changed_steps(clean, faulty)
    kinds = {s.step_id: s.step_type for s in faulty.trace}
    flow = true_flow(faulty, faults, leaks or {})
    return Evaluation(
        expected_answer=final_answer(clean), required_facts=required,
        benign_memory_ids=benign, gold_affected_ids=[*faults, *changed, *steps],
        gold_affected_claim_ids=[s for s in flow if kinds.get(s) is StepType.CLAIM],
        clean_trace=clean.trace, clean_memory_store=clean.memory_store,
        fault_manifest=[FaultManifestEntry.model_validate(e) for e in manifest],
        primary_fault_type=primary)


def benign_active(case: Case) -> int:
    """The store size the paper bins by: benign records active when repair begins (the
    echo sweep's look-alikes, lookalikes.py, left out: they are the benchmark's, not the
    session's)."""
    assert case.evaluation is not None
    benign = set(case.evaluation.benign_memory_ids) - set(labelled(case))
    return sum(1 for m in case.memory_store if m.memory_id in benign and m.status is MemoryStatus.ACTIVE)
