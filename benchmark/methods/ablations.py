"""Planner ablations (docs/method.md, Baselines and ablations; notes §5, §9 A14).

- `no_support_check`: our planner with P_sup = ∅ (every affected candidate is invalidated).
- `no_rollback_planner`: no rule-guided plan. Every step of A0 is invalidated and replayed
  (observations through their generating actions) together with v_final, in trace order:
  the whole fault-dependent suffix, with no support check (A14; the paper's F1 for this
  variant equals that of "w/o support check") and no answer-relevance. F is deleted;
  nothing is quarantined, so contaminated derived records stay active (a replayed write
  never rewrites a record that is still active). Suspicious = invalidated steps not
  replayed or refreshed.
- `no_selective_replay`: our planner's dispositions unchanged (delete, quarantine,
  invalidate, suspicious), but replay every step from the earliest seed on (timestamp ≥
  the smallest t_r; observations refreshed through their actions), and without early
  cutoff (`early_cutoff = False`: the executor skips nothing). The paper's numbers support
  this reading: identical F1 and preservation, replay ratio 0.755.
"""

from __future__ import annotations

from provrepair.benchmark.methods.common import build_plan, earliest_seed_ts
from provrepair.provenance.order import final_answer_step
from provrepair.repair.methods.base import MethodBase, MethodContext
from provrepair.repair.plan import compute_plan
from provrepair.repair.plan.model import RepairPlan


class WithoutSupportCheck(MethodBase):
    name = "no_support_check"
    description = "ablation: P_sup = ∅ (every affected candidate is invalidated)"

    def make_plan(self, ctx: MethodContext) -> RepairPlan:
        return compute_plan(ctx.store, ctx.task_id, ctx.faults, support_check=False)[0]


class NoRollbackPlanner(MethodBase):
    name = "no_rollback_planner"
    description = "ablation: invalidate and replay every A0 step + the final answer; no quarantine"

    def make_plan(self, ctx: MethodContext) -> RepairPlan:
        case = ctx.case
        base = compute_plan(ctx.store, ctx.task_id, ctx.faults)[0]
        steps = {s.step_id for s in case.trace}
        region = [i for i in base.affected_ids if i in steps]
        final = final_answer_step(case)
        replay = set(region) | ({final.step_id} if final else set())
        return build_plan(case, task_id=ctx.task_id, replay=replay, delete=base.delete_memory_ids,
                          invalidate=region, suspicious=region, seeds=base.seeds,
                          affected=base.affected_ids)


class NoSelectiveReplay(MethodBase):
    name = "no_selective_replay"
    description = "ablation: our plan, but replay every step from the earliest seed on"
    early_cutoff = False

    def make_plan(self, ctx: MethodContext) -> RepairPlan:
        case = ctx.case
        base = compute_plan(ctx.store, ctx.task_id, ctx.faults)[0]
        start = earliest_seed_ts(case, base.seeds)
        later = [s.step_id for s in case.trace if start is not None and s.timestamp >= start]
        return build_plan(case, task_id=ctx.task_id, replay={*base.replay_step_ids, *later},
                          delete=base.delete_memory_ids, quarantine=base.quarantine_memory_ids,
                          invalidate=base.invalidate_claim_ids,
                          suspicious=base.suspicious_step_ids, seeds=base.seeds,
                          affected=base.affected_ids, supported=base.supported_ids,
                          answer_relevant=base.answer_relevant_ids)
