"""Shared pieces of the baselines and ablations: trace helpers, the plan builder with the
spec's invariants, and an in-memory replay (for counterfactual reruns).

Conventions every method here follows (docs/method.md §4-5):
- `replay_step_ids` never holds a `tool_observation`: an observation is refreshed by
  replaying its generating action (the actions in its `prev_step_ids`/`used_ids`).
- `preserve_step_ids` = every step neither replayed, invalidated, nor an observation whose
  generating action is replayed (those are withheld until the replay refreshes them).
- "Replay the final turn" = every non-observation step of the last turn (the largest `turn`
  of the trace), in trace order.
"""

from __future__ import annotations

from collections.abc import Iterable

from provrepair.provenance.errors import ProvrepairError
from provrepair.provenance.models import Case, ExecutionStep
from provrepair.provenance.vocab import MemoryStatus, StepType
from provrepair.repair.plan.invariants import check_plan
from provrepair.repair.plan.model import RepairPlan
from provrepair.repair.reasoners.base import Reasoner
from provrepair.repair.replay.executor import Executor, ReplayResult
from provrepair.repair.tools.packs import domain_functions, domain_tools
from provrepair.repair.tools.registry import ToolRegistry

OBS = StepType.TOOL_OBSERVATION


def positions(case: Case) -> dict[str, int]:
    return {s.step_id: i for i, s in enumerate(case.trace)}


def last_turn(case: Case) -> int:
    return max((s.turn for s in case.trace), default=0)


def final_turn_steps(case: Case) -> list[str]:
    """The steps replayed by "replay the final turn" (observations are refreshed instead)."""
    turn = last_turn(case)
    return [s.step_id for s in case.trace if s.turn == turn and s.step_type is not OBS]


def final_input_ts(case: Case) -> int:
    """When the final user turn began: its user input's timestamp (else its first step's)."""
    turn = last_turn(case)
    times = [u.timestamp for u in case.session if u.turn == turn]
    times += [s.timestamp for s in case.trace if s.turn == turn]
    return min(times, default=0)


def node_ts(case: Case, node_id: str) -> int:
    """The spec's node timestamp: a step's `timestamp`, a memory's `created_at`."""
    for step in case.trace:
        if step.step_id == node_id:
            return step.timestamp
    for memory in case.memory_store:
        if memory.memory_id == node_id:
            return memory.created_at
    raise KeyError(node_id)


def earliest_seed_ts(case: Case, seeds: dict[str, str]) -> int | None:
    return min((node_ts(case, s) for s in seeds.values()), default=None)


def active_memories(case: Case) -> set[str]:
    return {m.memory_id for m in case.memory_store if m.status is MemoryStatus.ACTIVE}


def generating_actions(case: Case, observation: ExecutionStep) -> list[str]:
    kinds = {s.step_id: s.step_type for s in case.trace}
    return [i for i in (*observation.prev_step_ids, *observation.used_ids)
            if kinds.get(i) is StepType.TOOL_ACTION]


def to_replayable(case: Case, step_ids: Iterable[str]) -> set[str]:
    """Step ids with each observation mapped to its generating actions."""
    by_id = {s.step_id: s for s in case.trace}
    out: set[str] = set()
    for step_id in step_ids:
        step = by_id[step_id]
        out.update(generating_actions(case, step) if step.step_type is OBS else [step_id])
    return out


def refreshed_observations(case: Case, replay: set[str]) -> set[str]:
    return {s.step_id for s in case.trace if s.step_type is OBS
            and set(generating_actions(case, s)) & replay}


def memories_used_by(case: Case, steps: Iterable[ExecutionStep]) -> set[str]:
    """Memories a step reads or cites: named in its `used_ids`, or retrieved by a
    `memory_read` step it cites."""
    memory_ids = {m.memory_id for m in case.memory_store}
    by_id = {s.step_id: s for s in case.trace}
    used: set[str] = set()
    for step in steps:
        for ref in step.used_ids:
            if ref in memory_ids:
                used.add(ref)
            elif ref in by_id and by_id[ref].step_type is StepType.MEMORY_READ:
                used.update(i for i in by_id[ref].used_ids if i in memory_ids)
    return used


def build_plan(case: Case, *, task_id: str, replay: Iterable[str] = (),
               delete: Iterable[str] = (), quarantine: Iterable[str] = (),
               invalidate: Iterable[str] = (), suspicious: Iterable[str] = (),
               seeds: dict[str, str] | None = None, affected: Iterable[str] = (),
               supported: Iterable[str] = (), answer_relevant: Iterable[str] = (),
               preserve: Iterable[str] | None = None) -> RepairPlan:
    """A RepairPlan in the spec's field conventions (lists in trace / store order).
    `preserve` None: every step not withheld; else those of `preserve` not withheld."""
    pos = positions(case)
    replay_set = to_replayable(case, replay)
    invalid = set(invalidate)
    refreshed = refreshed_observations(case, replay_set)
    withheld = invalid | replay_set | refreshed
    kept = set(preserve or ())
    order = {m.memory_id: i for i, m in enumerate(case.memory_store)}
    order.update({k: len(order) + v for k, v in pos.items()})

    def steps(ids: Iterable[str]) -> list[str]:
        return sorted(set(ids), key=pos.__getitem__)

    def nodes(ids: Iterable[str]) -> list[str]:
        return sorted(set(ids), key=lambda i: order.get(i, -1))

    plan = RepairPlan(
        task_id=task_id, delete_memory_ids=nodes(delete),
        quarantine_memory_ids=nodes(set(quarantine) - set(delete)),
        invalidate_claim_ids=steps(invalid), replay_step_ids=steps(replay_set),
        preserve_step_ids=[s.step_id for s in case.trace if s.step_id not in withheld
                           and (preserve is None or s.step_id in kept)],
        redundant_step_ids=[], suspicious_step_ids=steps(set(suspicious) - replay_set - refreshed),
        seeds=dict(seeds or {}), affected_ids=nodes(affected), supported_ids=nodes(supported),
        answer_relevant_ids=nodes(answer_relevant))
    check_case_plan(case, plan)
    return plan


def check_case_plan(case: Case, plan: RepairPlan) -> None:
    """The plan invariants (repair/plan/invariants.py) against the case's ids."""
    check_plan(plan, steps={s.step_id for s in case.trace},
               memories={m.memory_id for m in case.memory_store})


def replay_in_memory(case: Case, plan: RepairPlan, reasoner: Reasoner) -> ReplayResult | None:
    """Run the shared executor without touching the store (a counterfactual rerun);
    None when the rerun fails (a side effect refused, or an error)."""
    tools = ToolRegistry(case.tools, case.world, domain_tools(case.domain))
    executor = Executor(case, plan, reasoner, tools, "probe", early_cutoff=False,
                        functions=domain_functions(case.domain))
    try:
        result = executor.run()
    except ProvrepairError:  # SideEffectRefused among them
        return None
    return None if result.needs_human else result
