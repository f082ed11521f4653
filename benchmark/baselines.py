"""Baselines that exist only to test the benchmark itself, registered with the engine's
methods when a benchmark run starts (`register_baselines`), never by the engine.

    dependency_guided_echo
                        ours with the echo sweep acting (repair --quarantine-copies): the
                        records the plan reports as suspected copies are quarantined too
    replay_everything   delete the diagnosed faults, replay every step of the trace, no
                        provenance at all (issue 31): the floor that selective replay must beat
                        once replay can disagree (noise.py). Without replay noise it recovers
                        whatever a deterministic re-run recovers, so a benchmark where it ties
                        ours measures the generator, not the repair.
"""

from __future__ import annotations

from provrepair.provenance.vocab import StepType
from provrepair.repair.methods import METHODS, register
from provrepair.repair.methods.agenttrace import overwritten
from provrepair.repair.methods.base import MethodBase, MethodContext
from provrepair.repair.methods.common import build_plan
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


BASELINES = (ReplayEverything(),
             QuarantiningCopies(DependencyGuided(), "dependency_guided_echo",
                                "ours + the echo sweep: suspected copies quarantined"))


def register_baselines() -> None:
    """Add the benchmark's own baselines to the method registry (idempotent)."""
    for method in BASELINES:
        if method.name not in METHODS:
            register(method)
