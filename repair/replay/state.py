"""The repaired state during selective replay (docs/method.md §5): the memory store
M⁻ → M', the visible steps, and the id remapping from replaced nodes to their replacements.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from provrepair.provenance.models import Case, ExecutionStep, MemoryRecord, UserInput
from provrepair.provenance.state.memory import allocate_id, next_number, version_id, visible_at
from provrepair.provenance.vocab import MemoryStatus
from provrepair.repair.derive import Context, DomainFunction, visible_facts
from provrepair.repair.plan.model import RepairPlan


@dataclass
class NewMemory:
    record: MemoryRecord
    produced_by: str            # new step id
    replaces: str | None        # the removed record it regenerates


class RepairState:
    """Memories, visible steps and remapping while V_replay is walked in trace order."""

    def __init__(self, case: Case, plan: RepairPlan, tag: str,
                 stored_ids: Iterable[tuple[str, str]] = ()):
        """`stored_ids`: (id, kind) of every node stored for the task, earlier runs' included
        (the case leaves those out); new ids are never one of them (docs/method.md §5, step 5)."""
        self.case, self.plan, self.tag = case, plan, tag
        stored = list(stored_ids)
        self.taken = {node_id for node_id, _ in stored} | {u.input_id for u in case.session} \
            | {s.step_id for s in case.trace} | {m.memory_id for m in case.memory_store}
        stored_memories = [node_id for node_id, kind in stored if kind == "memory"]
        self.original = {s.step_id: s for s in case.trace}
        self.position = {s.step_id: i for i, s in enumerate(case.trace)}
        self.memory_position = {m.memory_id: i for i, m in enumerate(case.memory_store)}
        self.memories = {m.memory_id: m for m in case.memory_store}
        self.status_changes: dict[str, str] = {}
        self.restored: list[str] = []
        self.invalidated = set(plan.invalidate_claim_ids)
        self.removed = set(plan.delete_memory_ids) | set(plan.quarantine_memory_ids)
        self.visible = set(plan.preserve_step_ids)     # old step ids visible as they are
        self.replacement: dict[str, ExecutionStep] = {}  # old step id → its replacement
        self.new_position: dict[str, int] = {}           # new step id → old trace position
        self.added: dict[str, ExecutionStep] = {}        # new steps replacing nothing
        self.restored_for: dict[str, str] = {}           # removed record → restored predecessor
        self.memory_remap: dict[str, str] = {}           # removed memory → regenerated one
        self.new_memories: list[NewMemory] = []
        self._next_memory = next_number([*self.memories, *stored_memories])
        # agent ids with versions: a record the agent updated in place (docs/case-format.md)
        self._in_place = {m.record_id for m in case.memory_store if m.record_id is not None}

    # -- dispositions -------------------------------------------------------------------------

    def apply_dispositions(self) -> None:
        """M⁻: F deleted, quarantine quarantined; records they had superseded that are not
        themselves affected become active again (replay may supersede them anew)."""
        for memory_id in self.plan.delete_memory_ids:
            self.set_status(memory_id, MemoryStatus.DELETED)
        for memory_id in self.plan.quarantine_memory_ids:
            self.set_status(memory_id, MemoryStatus.QUARANTINED)
        affected = set(self.plan.affected_ids)
        for memory_id in sorted(self.removed):
            old = self.memories[memory_id].supersedes
            if (old is not None and old in self.memories and old not in affected
                    and self.memories[old].status is MemoryStatus.SUPERSEDED):
                self.set_status(old, MemoryStatus.ACTIVE)
                self.restored.append(old)
                self.restored_for[memory_id] = old

    def set_status(self, memory_id: str, status: MemoryStatus) -> None:
        record = self.memories[memory_id]
        if record.status is status:
            return
        self.memories[memory_id] = record.model_copy(update={"status": status})
        self.status_changes[memory_id] = status.value
        if status is not MemoryStatus.ACTIVE and memory_id in self.restored:
            self.restored.remove(memory_id)

    def carry(self, record: MemoryRecord, replaces: str) -> MemoryRecord:
        """A record an earlier conversation's repair rewrote, as this conversation reads it
        from the shared store (a namespace repair, repair/namespace_repair.py): visible in
        place of `replaces` from the start, and written with this run as a new version of the
        same agent id."""
        agent = record.record_id or record.memory_id
        memory_id = agent if agent not in self.taken else self.new_memory_id(agent)
        self.taken.add(memory_id)
        carried = record.model_copy(update={
            "memory_id": memory_id, "task_id": self.case.task_id,
            "record_id": None if memory_id == agent else agent, "derived_from": [],
            "sufficient_from": [], "supersedes": None, "last_modified_by": None,
            "status": MemoryStatus.ACTIVE})
        self.memories[memory_id] = carried
        self.memory_remap[replaces] = memory_id
        self.new_memories.append(NewMemory(carried, "", replaces))
        return carried

    # -- ids ----------------------------------------------------------------------------------

    def new_step_id(self, old_id: str) -> str:
        return f"{old_id}@{self.tag}"

    def new_memory_id(self, agent_id: str | None = None) -> str:
        """A new version of the agent's record `agent_id` (`<id>~N`), else the paper's naming:
        m_n + the next number after the largest numeric suffix in the store; never a taken id."""
        if agent_id is not None:
            return version_id(agent_id, self.taken)
        return allocate_id("m_n", self.taken, start=self._next_memory)

    def agent_id_in_place(self, record: MemoryRecord | None) -> str | None:
        """The agent id a record regenerated from `record` keeps: `record`'s own when the agent
        updates that record in place (it is a version, or has versions); None: a new record."""
        if record is None:
            return None
        if record.record_id is not None:
            return record.record_id
        return record.memory_id if record.memory_id in self._in_place else None

    def remap(self, ids: list[str]) -> list[str]:
        """Old ids as the replay sees them: replaced steps → replacements, removed memories →
        regenerated records; withheld or removed ones without replacement are dropped."""
        out = []
        for node_id in ids:
            mapped = self._visible_id(node_id)
            if mapped is not None and mapped not in out:
                out.append(mapped)
        return out

    def _visible_id(self, node_id: str) -> str | None:
        if node_id in self.replacement:
            return self.replacement[node_id].step_id
        if node_id in self.original:
            return node_id if node_id in self.visible else None
        if node_id in self.memories:
            # a removed record reads as its regenerated replacement, else as the record it
            # had superseded when that one was restored (retrieval would find it now)
            mapped = self.memory_remap.get(node_id, self.restored_for.get(node_id, node_id))
            return mapped if self.memories[mapped].status is MemoryStatus.ACTIVE else None
        return node_id  # a user input

    # -- context ------------------------------------------------------------------------------

    def visible_steps(self, before: int) -> list[ExecutionStep]:
        old = [self.original[i] for i in self.visible if self.position[i] < before]
        new = [s for i, s in self.replacement.items() if self.position[i] < before]
        new += [s for s in self.added.values() if self.new_position[s.step_id] < before]
        return sorted(old + new, key=lambda s: (s.timestamp, self._pos(s)))

    def visible_memories(self, ts: int) -> list[MemoryRecord]:
        return [m for m in self.memories.values() if visible_at(m, ts)]

    def inputs(self, ts: int) -> list[UserInput]:
        return [u for u in self.case.session if u.timestamp <= ts]

    def context(self, step: ExecutionStep, cited: list[str],
                functions: dict[str, DomainFunction]) -> Context:
        """Facts visible to `step` (docs/case-format.md, Derivations, "Visible context")."""
        here = self.position[step.step_id]
        memories = [(m, self.memory_position.get(m.memory_id, here))
                    for m in self.visible_memories(step.timestamp)]
        steps = [(s, self._pos(s)) for s in self.visible_steps(here)]
        return Context(visible_facts(memories, steps), frozenset(cited), functions)

    def replace(self, old_id: str, new: ExecutionStep) -> None:
        """`new` replaces `old_id` from now on (visible in its place, same trace position)."""
        self.replacement[old_id] = new
        self.new_position[new.step_id] = self.position[old_id]

    def add(self, new: ExecutionStep, after: str) -> None:
        """A new step replacing nothing (an observation of a re-issued call that had none),
        visible from now on, placed just after the step `after` in trace order."""
        self.added[new.step_id] = new
        self.new_position[new.step_id] = self.position.get(after, self.new_position.get(after, 0))

    def _pos(self, step: ExecutionStep) -> int:
        return self.position.get(step.step_id, self.new_position.get(step.step_id, 0))

