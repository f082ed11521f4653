"""Baseline "MemAudit-style" (docs/method.md, Baselines; paper App. G; notes §5, §9 A13).

The paper (paraphrased): post-hoc memory auditing as a deletion selector — candidates are
the active memories before the final turn used by later non-retrieval steps (falling back to
the diagnosed faults when none), scored by a consistency anomaly and a counterfactual
influence, the high scorers deleted and the final turn replayed. Departure: the paper's
influence reads a gold scorer; that variant is `memaudit_oracle`, flagged as such, and
`memaudit` measures influence as a change of the answer (below).

Pool: memories active when repair begins, created before the final user turn, that some
non-retrieval step uses (named in its `used_ids`, or retrieved by a `memory_read` it cites).
Empty pool → the diagnosed faults that are still active (the paper's "oracle-assisted
diagnostic fallback"; F is every method's input, so this reads no evaluation data).

Each candidate m is scored   score(m) = α·influence(m) + (1−α)·anomaly(m),  α = 0.5,
and every m with score > 0.5 (strictly) is deleted together; the final user turn is then
replayed. No candidate above the threshold → a no-op plan, no replay (paper: replay ratio
0.051 < 0.061). No trace rollback, claim invalidation or lineage repair.

- anomaly(m) = contradiction / (support + contradiction), 0 when both are 0, over the
  consistency graph of the active memories sharing m's (`entity_id`, `fact_key`): an equal
  `fact_value` is a support edge, a different one a contradiction edge.
- influence(m): delete m alone and rerun the final user turn with the shared executor, in
  memory (nothing is written); 0 when the rerun fails.

Two variants (§9 A13: oracle pieces only behind an explicit flag):
- `memaudit` (oracle_assisted = False, reads nothing but the stored case): influence = 1
  when deleting m changes the regenerated final answer (white space and case ignored),
  else 0 — counterfactual influence on the output, without a gold scorer.
- `memaudit_oracle` (oracle_assisted = True, as the paper ran it): it reads the case's
  evaluation block from the vault. S(answer) = the fraction of `required_facts` the answer
  contains; influence = max(0, S₋ₘ − S_orig) / (1 − S_orig), 0 when S_orig = 1; and
  anomaly(m) = 1.0 when the fault manifest's injected content matches m (its content, its
  corrupted fact value or its injected fact: `manifest_matches`; the paper's
  oracle-assisted anomaly).
  Benchmark tables mark its rows as oracle-assisted.

The reruns' LLM calls are decision calls (paper: 10.43 LLM calls per case for MemAudit),
returned with the plan (`Planned.decision`).
"""

from __future__ import annotations

from collections.abc import Callable

from provrepair.benchmark.methods.common import (
    active_memories,
    build_plan,
    final_input_ts,
    final_turn_steps,
    memories_used_by,
    replay_in_memory,
)
from provrepair.provenance.models import Case, Evaluation, MemoryRecord
from provrepair.provenance.order import final_answer_step
from provrepair.provenance.readback import read_case
from provrepair.provenance.vocab import StepType
from provrepair.repair.methods.base import Decision, MethodBase, MethodContext, MethodNotRun, Planned
from provrepair.repair.reasoners.base import Reasoner

ALPHA = 0.5
NOT_REGENERATED = (StepType.MEMORY_READ, StepType.TOOL_OBSERVATION)
THRESHOLD = 0.5


def norm(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def candidate_pool(case: Case, faults: list[str]) -> list[str]:
    active, start = active_memories(case), final_input_ts(case)
    users = [s for s in case.trace if s.step_type is not StepType.MEMORY_READ]
    used = memories_used_by(case, users)
    pool = [m.memory_id for m in case.memory_store
            if m.memory_id in active and m.memory_id in used and m.created_at < start]
    return pool or [f for f in faults if f in active]


def anomaly(memory: MemoryRecord, active: list[MemoryRecord]) -> float:
    if memory.entity_id is None or memory.fact_key is None:
        return 0.0
    peers = [m for m in active if m.memory_id != memory.memory_id
             and (m.entity_id, m.fact_key) == (memory.entity_id, memory.fact_key)]
    contradictions = sum(1 for m in peers if m.fact_value != memory.fact_value)
    return contradictions / len(peers) if peers else 0.0


CONTENT_KEYS = ("content", "corrupted_content", "injected_content", "injected_value")
VALUE_KEYS = ("corrupted_value", "corrupted_fact_value")


def manifest_matches(evaluation: Evaluation, memory: MemoryRecord) -> bool:
    """The oracle-assisted anomaly: the fault manifest's injected content matches m — its
    full content (`content`, `corrupted_content`, `injected_content`, `injected_value`), its
    corrupted fact value (`corrupted_value`, `corrupted_fact_value`) or its injected `fact`
    (entity, key, value). Ids (`target`, `faulty_id`) are never used."""
    for entry in evaluation.fault_manifest:
        extra = entry.model_extra or {}
        texts = [extra[k] for k in CONTENT_KEYS if isinstance(extra.get(k), str)]
        values = [str(extra[k]) for k in VALUE_KEYS if extra.get(k) is not None]
        fact = extra.get("fact") if isinstance(extra.get("fact"), dict) else {}
        if any(norm(t) == norm(memory.content) for t in texts):
            return True
        if memory.fact_value is not None and any(norm(v) == norm(memory.fact_value) for v in values):
            return True
        if fact and (fact.get("entity_id"), fact.get("fact_key"), str(fact.get("fact_value"))) == (
                memory.entity_id, memory.fact_key, memory.fact_value):
            return True
    return False


class Rerun:
    """Delete one memory, rerun the final turn in memory; count what it cost."""

    def __init__(self, case: Case, task_id: str, reasoner: Reasoner):
        self.case, self.task_id, self.reasoner = case, task_id, reasoner
        self.decision = Decision()

    def answer(self, memory_id: str) -> tuple[bool, str | None]:
        """(rerun succeeded, regenerated answer — None when unresolved)."""
        plan = build_plan(self.case, task_id=self.task_id, delete=[memory_id],
                          replay=final_turn_steps(self.case))
        result = replay_in_memory(self.case, plan, self.reasoner)
        if result is None:
            return False, None
        self.decision.llm_calls += result.llm_calls
        self.decision.tokens += result.tokens
        self.decision.regenerations += sum(1 for new, _ in result.new_steps
                                           if new.step_type not in NOT_REGENERATED)
        return True, result.answer


Influence = Callable[[bool, str | None], float]


def output_change(original: str | None) -> Influence:
    """Non-oracle: 1 when deleting m changes the final answer."""
    return lambda ok, answer: float(ok and norm(answer) != norm(original))


def oracle_score(answer: str | None, required: list[str]) -> float:
    """S: the fraction of required facts the answer contains (the deterministic oracle)."""
    return sum(norm(f) in norm(answer) for f in required) / len(required) if required else 1.0


def oracle_gain(original: str | None, required: list[str]) -> Influence:
    """Oracle-assisted: max(0, S₋ₘ − S_orig) / (1 − S_orig), 0 when S_orig = 1."""
    base = oracle_score(original, required)

    def influence(ok: bool, answer: str | None) -> float:
        if not ok or base >= 1.0:
            return 0.0
        return max(0.0, oracle_score(answer, required) - base) / (1.0 - base)
    return influence


class MemAudit(MethodBase):
    name = "memaudit"
    description = "baseline: MemAudit-style anomaly + counterfactual influence, delete > 0.5"
    oracle_assisted = False

    def plan(self, ctx: MethodContext) -> Planned:
        case = ctx.case
        evaluation = self._evaluation(ctx)
        final = final_answer_step(case)
        original = final.content if final else None
        influence = (oracle_gain(original, evaluation.required_facts) if evaluation
                     else output_change(original))
        active = [m for m in case.memory_store if m.memory_id in active_memories(case)]
        by_id = {m.memory_id: m for m in case.memory_store}
        rerun = Rerun(case, ctx.task_id, ctx.reasoner)
        chosen = []
        for memory_id in candidate_pool(case, ctx.fault_ids):
            memory = by_id[memory_id]
            oracle_hit = evaluation is not None and manifest_matches(evaluation, memory)
            odd = 1.0 if oracle_hit else anomaly(memory, active)
            if ALPHA * influence(*rerun.answer(memory_id)) + (1 - ALPHA) * odd > THRESHOLD:
                chosen.append(memory_id)
        if not chosen:
            return Planned(build_plan(case, task_id=ctx.task_id), rerun.decision)
        return Planned(build_plan(case, task_id=ctx.task_id, delete=chosen,
                                  replay=final_turn_steps(case)), rerun.decision)

    def _evaluation(self, ctx: MethodContext) -> Evaluation | None:
        return None


class MemAuditOracle(MemAudit):
    name = "memaudit_oracle"
    description = ("baseline: MemAudit-style as the paper ran it (ORACLE-ASSISTED: reads the "
                   "evaluation block for its scores)")
    oracle_assisted = True

    def _evaluation(self, ctx: MethodContext) -> Evaluation | None:
        evaluation = read_case(ctx.store, ctx.task_id, with_evaluation=True).evaluation
        if evaluation is None:
            raise MethodNotRun(f"{self.name} needs the task's evaluation block (oracle-assisted); "
                               f"task {ctx.task_id!r} has none")
        return evaluation
