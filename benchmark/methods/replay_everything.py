"""Baselines that exist to test the benchmark itself (issue 31).

    replay_everything   delete the diagnosed faults, replay every step of the trace, no
                        provenance at all: the floor that selective replay must beat once
                        replay can disagree (noise.py). Without replay noise it recovers
                        whatever a deterministic re-run recovers, so a benchmark where it ties
                        ours measures the generator, not the repair.
    dependency_guided_echo
                        ours with the echo sweep acting (repair --quarantine-copies): the
                        records the plan reports as suspected copies are quarantined too
"""

from __future__ import annotations

from provrepair.benchmark.methods.agenttrace import overwritten
from provrepair.benchmark.methods.common import build_plan
from provrepair.provenance.vocab import StepType
from provrepair.repair.methods.base import MethodBase, MethodContext
from provrepair.repair.methods.ours import DependencyGuided, QuarantiningCopies
from provrepair.repair.plan.model import RepairPlan


class ReplayEverything(MethodBase):
    """Every non-observation step replayed in trace order (observations refreshed through their
    actions), no early cutoff; every claim invalidated, since every claim is recomputed; the
    records a replayed write wrote are overwritten by its new write (as AgentTrace's)."""

    name = "replay_everything"
    description = "baseline: delete the diagnosed faults, replay every step (no provenance)"
    early_cutoff = False

    def make_plan(self, ctx: MethodContext) -> RepairPlan:
        case = ctx.case
        replay = {s.step_id for s in case.trace if s.step_type is not StepType.TOOL_OBSERVATION}
        claims = {s.step_id for s in case.trace if s.step_type is StepType.CLAIM}
        faults = set(ctx.fault_ids)
        return build_plan(case, task_id=ctx.task_id, delete=faults, replay=replay,
                          invalidate=claims, quarantine=overwritten(case, replay) - faults,
                          affected=faults)


class DependencyGuidedEcho(QuarantiningCopies):
    """Ours with its plan's suspected copies quarantined (`repair --quarantine-copies`)."""

    def __init__(self) -> None:
        super().__init__(DependencyGuided(), "dependency_guided_echo",
                         "ours + the echo sweep: suspected copies quarantined")
