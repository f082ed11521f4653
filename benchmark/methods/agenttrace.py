"""Baseline "AgentTrace-style" (docs/method.md, Baselines; paper App. G; notes §5, §9 A11).

The paper (paraphrased): adapted from AgentTrace's causal graph tracing over logs for
root-cause localization; it scores candidate steps backward from the wrong answer, replays
from the root cause, "focuses exclusively on trace repair" and makes no memory decision
(its faulty removal is 0.000) — yet on the shopping case it "avoids keeping [the poisoned
price] active": what its replay re-derives is overwritten.

Candidates: `memory_read`, `claim`, `plan`, `tool_action` and `final_answer` steps that are
backward-reachable from the erroneous final answer v_final over E_prop ∪ CHAIN and
fault-relevant: in A0 (our affected region, from the diagnosed faults), directly using a
diagnosed memory (`used_ids`), in the fault-dependent suffix (timestamp ≥ the earliest
seed's t_r), or v_final itself. Each gets

    r(v) = 0.40 f_back + 0.25 f_aff + 0.20 f_fault + 0.10 f_down + 0.05 f_type

- f_back = d/d_max, d = shortest backward hop distance from v_final over E_prop ∪ CHAIN,
  d_max = the largest d among the candidates (d_max = 0 ⇒ f_back = 1)            (§9 A11)
  The paper prints f_back = 1 − d/d_max. Read with d measured from v_final, that gives
  v_final itself f_back = 1 and with f_aff, f_down and its prior it outscores every other
  candidate: on the controlled benchmark the "root cause" was the final answer in 142 of 150
  cases, the replay region the answer alone, claim F1 0.190 against the paper's 0.853. The
  paper describes root-cause localisation ("scores candidate steps backward from the wrong
  answer", AgentTrace's causal tracing): the root is where the contamination entered, the
  earliest contaminated step the backward walk from the failure reaches. So backward
  relevance grows with the distance walked back: d/d_max (departure from the printed
  formula, faithful to its description; tests/integration/test_methods_plans.py has a case
  where the two differ).
- f_aff = 1 if in A0; f_fault = 1 if it uses a diagnosed memory directly
- f_down = min(1, reached/8), reached = steps forward-reachable over E_prop; raised to at
  least 0.5 when the step reaches v_final over E_prop (v_final reaches itself)
- f_type = 0.95 memory_read, 0.85 claim, 0.75 plan, 0.65 tool_action, 0.40 final_answer
The highest r(v) is the root cause (ties: earliest in the trace); no candidate ⇒ v_final.

Plan: replay the provenance source steps of the diagnosed faults (their seeds that are
steps: producers, failed mutations) ∪ the sequential suffix of the trace from the root cause
through v_final (observations refreshed through their actions). No memory decision: nothing
is deleted for being faulty; a record written by a step it replays is overwritten by the
replayed write (quarantined, its regenerated version takes its place) — the only way a
faulty record leaves the store. Departure: our faulty-removal metric reads the store after
repair, so those overwrites count as removals (the paper credits only removal decisions,
hence its 0.000). The replayed steps are the invalidated ones (`invalidate_claim_ids` = the
replay set, §9 A5). A trace without a final answer replays the source steps only.
"""

from __future__ import annotations

from provrepair.benchmark.methods.common import (
    active_memories,
    build_plan,
    earliest_seed_ts,
    positions,
)
from provrepair.benchmark.methods.tracegraph import E_ALL, E_PROP, TraceGraph
from provrepair.provenance.models import Case, ExecutionStep
from provrepair.provenance.order import final_answer_step
from provrepair.provenance.vocab import StepType
from provrepair.repair.methods.base import MethodBase, MethodContext
from provrepair.repair.plan import compute_plan
from provrepair.repair.plan.model import RepairPlan

WEIGHTS = {"back": 0.40, "aff": 0.25, "fault": 0.20, "down": 0.10, "type": 0.05}
PRIORS = {StepType.MEMORY_READ: 0.95, StepType.CLAIM: 0.85, StepType.PLAN: 0.75,
          StepType.TOOL_ACTION: 0.65, StepType.FINAL_ANSWER: 0.40}
DOWN_SCALE = 8


class Scorer:
    def __init__(self, case: Case, final: ExecutionStep, affected: set[str], faults: set[str],
                 suffix_start: int):
        self.case, self.final, self.affected, self.faults = case, final, affected, faults
        self.suffix_start = suffix_start
        self.graph = TraceGraph(case)
        self.back = self.graph.distances(final.step_id, E_ALL, backward=True)
        self.reaches_final = set(self.graph.distances(final.step_id, E_PROP, backward=True))

    def candidates(self) -> list[ExecutionStep]:
        return [s for s in self.case.trace if s.step_type in PRIORS and s.step_id in self.back
                and self._relevant(s)]

    def _relevant(self, step: ExecutionStep) -> bool:
        return (step.step_id in self.affected or bool(self.faults & set(step.used_ids))
                or step.timestamp >= self.suffix_start or step.step_id == self.final.step_id)

    def score(self, step: ExecutionStep, d_max: int) -> float:
        down = min(1.0, len(self.graph.reached_steps(step.step_id)) / DOWN_SCALE)
        if step.step_id in self.reaches_final:
            down = max(down, 0.5)
        parts = {"back": self.back[step.step_id] / d_max if d_max else 1.0,
                 "aff": float(step.step_id in self.affected),
                 "fault": float(bool(self.faults & set(step.used_ids))),
                 "down": down, "type": PRIORS[step.step_type]}
        return sum(WEIGHTS[k] * v for k, v in parts.items())

    def root_cause(self) -> ExecutionStep:
        candidates = self.candidates()
        if not candidates:
            return self.final
        d_max = max(self.back[s.step_id] for s in candidates)
        pos = positions(self.case)
        return max(candidates, key=lambda s: (self.score(s, d_max), -pos[s.step_id]))


def overwritten(case: Case, replay: set[str]) -> set[str]:
    """Active records written by a replayed step: the replayed write takes their place."""
    written = {m for s in case.trace if s.step_id in replay for m in s.generated_memory_ids}
    return written & active_memories(case)


class AgentTrace(MethodBase):
    name = "agenttrace"
    description = "baseline: AgentTrace-style root-cause score, replay the suffix, no memory cleanup"

    def make_plan(self, ctx: MethodContext) -> RepairPlan:
        case = ctx.case
        base = compute_plan(ctx.store, ctx.task_id, ctx.faults)[0]
        steps = {s.step_id for s in case.trace}
        sources = {s for s in base.seeds.values() if s in steps}
        final = final_answer_step(case)
        replay = set(sources)
        if final is not None:
            replay |= self._suffix(case, base, final)
        return build_plan(case, task_id=ctx.task_id, replay=replay, invalidate=replay,
                          quarantine=overwritten(case, replay), seeds=base.seeds,
                          affected=base.affected_ids)

    @staticmethod
    def _suffix(case: Case, base: RepairPlan, final: ExecutionStep) -> set[str]:
        start = earliest_seed_ts(case, base.seeds)
        scorer = Scorer(case, final, set(base.affected_ids), set(base.delete_memory_ids),
                        final.timestamp if start is None else start)
        pos = positions(case)
        first, last = sorted((pos[scorer.root_cause().step_id], pos[final.step_id]))
        return {s.step_id for s in case.trace[first:last + 1]
                if s.step_type is not StepType.TOOL_OBSERVATION}
