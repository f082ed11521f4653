"""Replaying a memory mutation: M' = Apply(M⁻, ΔM) for one step, in trace order.

One new record per generated id whose record was removed (deleted or quarantined): content =
the step's new value, the i-th fact to the i-th record, `supersedes` = the i-th invalidated
record for an update or consolidation. Outputs that survived repair (preserved records) are
never rewritten or duplicated. Then the step's lifecycle effect is applied again: an update
or consolidation supersedes its (still active) inputs, a delete deletes them.
"""

from __future__ import annotations

from provrepair.provenance.models import ExecutionStep, MemoryRecord
from provrepair.provenance.state.memory import retired_status
from provrepair.provenance.vocab import MemorySource, MemoryStatus, StepType
from provrepair.repair.reasoners.base import StepOutput
from provrepair.repair.replay.state import NewMemory, RepairState


def apply_mutation(state: RepairState, old: ExecutionStep, new: ExecutionStep,
                   output: StepOutput) -> ExecutionStep:
    # an input regenerated earlier in this replay is retired in its replacement's place
    invalidated = [state.memory_remap.get(i, i) for i in old.invalidated_memory_ids
                   if i in state.memories]
    generated = []
    for index, old_id in enumerate(_outputs(old, output)):
        if old_id is not None and old_id in state.memories and old_id not in state.removed:
            continue  # a preserved output: protected, not regenerated
        supersedes = invalidated[index] if index < len(invalidated) and \
            old.step_type in (StepType.MEMORY_UPDATE, StepType.MEMORY_CONSOLIDATE) else None
        record = _regenerated(state, old_id, new, output, index, supersedes)
        state.memories[record.memory_id] = record
        if old_id is not None:
            state.memory_remap[old_id] = record.memory_id
        state.new_memories.append(NewMemory(record, new.step_id, old_id))
        generated.append(record.memory_id)
    retire = retired_status(old.step_type)  # provenance/state/memory.py
    if retire is not None:
        for memory_id in invalidated:
            if state.memories[memory_id].status is MemoryStatus.ACTIVE:
                state.set_status(memory_id, retire)
    return new.model_copy(update={"generated_memory_ids": generated,
                                  "invalidated_memory_ids": invalidated})


def _outputs(old: ExecutionStep, output: StepOutput) -> list[str | None]:
    """The records the replayed step writes: the ones it wrote before; or, for a write,
    update or consolidation that wrote none (a lifecycle operation that did not take effect:
    its new lineage never appeared), one new record per fact it derives (at least one)."""
    if old.generated_memory_ids or old.step_type is StepType.MEMORY_DELETE:
        return list(old.generated_memory_ids)
    return [None] * max(1, len(output.facts or []))


def _regenerated(state: RepairState, old_id: str | None, new: ExecutionStep,
                 output: StepOutput, index: int, supersedes: str | None) -> MemoryRecord:
    # the record it regenerates, else (a lineage that never appeared) the one it supersedes
    template = state.memories.get(old_id or supersedes or "")
    fact = output.facts[index] if output.facts and index < len(output.facts) else None
    created = template.created_at if template else new.timestamp
    derived = state.remap(template.derived_from) if template else []
    agent_id = state.agent_id_in_place(template)  # written in place as the recorded one was
    return MemoryRecord(
        memory_id=state.new_memory_id(agent_id), record_id=agent_id, task_id=new.task_id,
        content=output.content or "",
        source=template.source if template else MemorySource.AGENT_SUMMARY,
        last_modified_by=new.step_id, created_at=created, last_modified_at=created,
        derived_from=derived,
        sufficient_from=[i for i in (template.sufficient_from if template else []) if i in derived],
        supersedes=supersedes, trust_score=None, status=MemoryStatus.ACTIVE,
        fact_key=fact.fact_key if fact else (template.fact_key if template else None),
        fact_value=_text(fact.fact_value) if fact else None,
        entity_id=fact.entity_id if fact else (template.entity_id if template else None))


def _text(value: object) -> str | None:
    return None if value is None else str(value)
