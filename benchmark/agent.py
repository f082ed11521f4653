"""The agent runtime: a memory-augmented agent that runs a user turn as the paper's stages —
memory read, claim, tool planning, tool actions and observations, final answer, memory
mutation — recording every node (and so every derived edge) live through `Recorder`.

It regenerates each stage with the same `Reasoner` interface the replay executor uses: a
stage is a step template (type, derivation, candidate evidence) that the reasoner fills from
the visible context. Evidence is recorded from what the stage actually read: the sources its
lookups touched become `used_ids`, and a single touched source is `sufficient`.
Scripts (TurnScript) say what each stage derives; the offline reasoner makes runs
deterministic, which is what the benchmark generator relies on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from provrepair.provenance.models import ExecutionStep, Fact, MemoryRecord, UserInput
from provrepair.provenance.state.memory import allocate_id, retired_status, visible_at
from provrepair.provenance.vocab import MemorySource, MemoryStatus, StepType
from provrepair.repair.derive import Context, DomainFunction, visible_facts
from provrepair.repair.reasoners.base import Reasoner, StepOutput, StepRequest
from provrepair.repair.tools.registry import NoImplementation, ToolRegistry, ToolResult

WORD = re.compile(r"[a-z0-9]+")
Tamper = Callable[[ExecutionStep, StepOutput], StepOutput]


class ProvenanceSink(Protocol):
    """Where a run's provenance goes: the live `Recorder` (the store), or any object with
    the same methods (the benchmark generator builds cases in memory)."""

    task_id: str

    def user_input(self, record: UserInput | None = None, **fields: Any) -> UserInput: ...
    def memory(self, record: MemoryRecord | None = None, **fields: Any) -> MemoryRecord: ...
    def step(self, record: ExecutionStep | None = None, **fields: Any) -> ExecutionStep: ...


@dataclass
class MutationSpec:
    kind: str                                   # write | update | delete | consolidate
    derivation: dict[str, Any] | None = None    # content of the new record
    facts: list[Fact] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)   # records updated/deleted/consolidated
    source: MemorySource = MemorySource.AGENT_SUMMARY


@dataclass
class TurnScript:
    content: str                                # the user's message
    claim: dict[str, Any]
    answer: dict[str, Any]
    plan: dict[str, Any] | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    mutations: list[MutationSpec] = field(default_factory=list)
    top_k: int = 5


class Agent:
    """Runs turns for one task; `memories` is the live store, `steps` the trace so far."""

    def __init__(self, recorder: ProvenanceSink, reasoner: Reasoner, tools: ToolRegistry, *,
                 domain: str, functions: dict[str, DomainFunction] | None = None,
                 tamper: Tamper | None = None):
        self.recorder, self.reasoner, self.tools = recorder, reasoner, tools
        self.domain, self.functions = domain, functions or {}
        # Fault injection (the benchmark's manifests): may rewrite a stage's output before it
        # is recorded; the step keeps its honest derivation, so replay can recompute it.
        self.tamper = tamper
        self.memories: dict[str, MemoryRecord] = {}
        self.steps: list[ExecutionStep] = []
        self.inputs: list[UserInput] = []
        self.clock = 0

    def add_memory(self, record: MemoryRecord) -> None:
        """A record already in the store before the session (or injected into it)."""
        self.memories[record.memory_id] = record
        self.recorder.memory(record)

    def run_turn(self, turn: int, script: TurnScript) -> str | None:
        self.clock = max(self.clock, turn * 100)
        user = self.recorder.user_input(input_id=f"u_{turn}", turn=turn, content=script.content,
                                        timestamp=self._tick())
        self.inputs.append(user)
        read = self._memory_read(turn, user, script.top_k)
        claim = self._stage(StepType.CLAIM, turn, script.claim, [read.step_id, user.input_id,
                                                                  *read.used_ids])
        evidence = [claim.step_id, user.input_id]
        if script.plan is not None or script.tool_calls:
            plan = self._stage(StepType.PLAN, turn, script.plan, [claim.step_id, user.input_id])
            for call in script.tool_calls:
                evidence.append(self._tool(turn, call, plan).step_id)
        answer = self._stage(StepType.FINAL_ANSWER, turn, script.answer, evidence)
        for mutation in script.mutations:
            self._mutate(turn, mutation, user)
        return None if answer.content.startswith("(unresolved") else answer.content

    # -- stages -------------------------------------------------------------------------------

    def _memory_read(self, turn: int, user: UserInput, top_k: int) -> ExecutionStep:
        """Retrieval over the active store: word overlap with the request, newest first."""
        words = set(WORD.findall(user.content.lower()))
        active = [m for m in self.memories.values() if m.status is MemoryStatus.ACTIVE]
        scored = sorted(active, key=lambda m: (-len(words & _words(m)), -m.created_at,
                                               m.memory_id))
        hits = [m.memory_id for m in scored[:top_k]]
        return self._record(StepType.MEMORY_READ, turn, "Retrieved: " + (", ".join(hits) or
                                                                         "nothing"), hits, [])

    def _stage(self, step_type: StepType, turn: int, derivation: dict[str, Any] | None,
               evidence: list[str]) -> ExecutionStep:
        template = self._template(step_type, turn, derivation, evidence)
        output, touched = self._ask(template)
        used = list(dict.fromkeys([*evidence, *touched]))
        return self._record(step_type, turn, _content(output), used,
                            touched if len(touched) == 1 else [], facts=output.facts,
                            derivation=derivation)

    def _tool(self, turn: int, derivation: dict[str, Any], plan: ExecutionStep) -> ExecutionStep:
        template = self._template(StepType.TOOL_ACTION, turn, derivation, [plan.step_id])
        output, touched = self._ask(template)
        call = output.tool_call
        action = self._record(StepType.TOOL_ACTION, turn, _content(output),
                              list(dict.fromkeys([plan.step_id, *touched])), [],
                              derivation=derivation, tool_name=call.tool if call else None,
                              tool_args=call.args if call else None)
        if call is None:
            return action
        try:
            result = self.tools.call(call.tool, call.args)
        except NoImplementation as exc:  # the simulated world has no answer: it says so
            result = ToolResult(str(exc), [], "error")
        return self._record(StepType.TOOL_OBSERVATION, turn, result.result, [action.step_id],
                            [], facts=[Fact.model_validate(f) for f in result.facts],
                            status=result.status)

    def _mutate(self, turn: int, spec: MutationSpec, user: UserInput) -> None:
        step_type = StepType(f"memory_{spec.kind}")
        targets = [t for t in spec.targets if t in self.memories]
        template = self._template(step_type, turn, spec.derivation, [user.input_id, *targets])
        template.facts = spec.facts or None
        touched: list[str] = []
        if spec.kind == "delete" and spec.derivation is None:
            output = StepOutput(content=f"Delete {', '.join(targets)}")
        else:
            output, touched = self._ask(template)
        sources = list(dict.fromkeys(touched))
        step_id = self._next_step_id()
        new_ids = self._new_records(spec, output, step_id, targets, sources) \
            if output.content is not None and spec.kind != "delete" else []
        self._record(step_type, turn, _content(output), [user.input_id, *targets, *sources],
                     sources if len(sources) == 1 else [], facts=output.facts,
                     derivation=spec.derivation, generated=new_ids, invalidated=targets,
                     step_id=step_id)
        retire = retired_status(step_type)  # provenance/state/memory.py
        if retire is not None:
            for target in targets:
                self._set_status(target, retire, step_id)
        for memory_id in new_ids:
            self.recorder.memory(self.memories[memory_id])

    # -- helpers ------------------------------------------------------------------------------

    def _new_records(self, spec: MutationSpec, output: StepOutput, step_id: str,
                     targets: list[str], sources: list[str]) -> list[str]:
        facts = output.facts or [None]  # type: ignore[list-item]
        derived = [s for s in sources if s in self.memories] + \
            (targets if spec.kind == "consolidate" else [])
        derived = list(dict.fromkeys(derived))
        ids = []
        for index, fact in enumerate(facts):
            memory_id = self._next_memory_id()
            supersedes = targets[index] if spec.kind in ("update", "consolidate") and \
                index < len(targets) else None
            self.memories[memory_id] = MemoryRecord(
                memory_id=memory_id, task_id=self.recorder.task_id, content=output.content or "",
                source=spec.source, last_modified_by=step_id, created_at=self.clock + 1,
                last_modified_at=self.clock + 1, derived_from=derived,
                sufficient_from=derived if len(derived) == 1 else [], supersedes=supersedes,
                status=MemoryStatus.ACTIVE, entity_id=fact.entity_id if fact else None,
                fact_key=fact.fact_key if fact else None,
                fact_value=None if fact is None or fact.fact_value is None else str(fact.fact_value))
            ids.append(memory_id)
        return ids

    def _set_status(self, memory_id: str, status: MemoryStatus, by: str) -> None:
        record = self.memories[memory_id].model_copy(update={
            "status": status, "last_modified_by": by, "last_modified_at": self.clock})
        self.memories[memory_id] = record
        self.recorder.memory(record)

    def _template(self, step_type: StepType, turn: int, derivation: dict[str, Any] | None,
                  evidence: list[str]) -> ExecutionStep:
        return ExecutionStep(step_id=self._next_step_id(), task_id=self.recorder.task_id,
                             step_type=step_type, content="", prev_step_ids=[],
                             next_step_ids=[], invalidated_memory_ids=[],
                             generated_memory_ids=[], used_ids=evidence,
                             timestamp=self.clock + 1, turn=turn, derivation=derivation)

    def _ask(self, template: ExecutionStep) -> tuple[StepOutput, list[str]]:
        memories = [(m, i) for i, m in enumerate(self.memories.values())
                    if visible_at(m, template.timestamp)]
        steps = [(s, i) for i, s in enumerate(self.steps)]
        context = Context(visible_facts(memories, steps), frozenset(template.used_ids),
                          self.functions)
        request = StepRequest(step=template, domain=self.domain, context=context,
                              inputs=list(self.inputs), memories=[m for m, _ in memories],
                              steps=list(self.steps), tools=list(self.tools.specs.values()))
        output = self.reasoner.regenerate(request)
        if self.tamper is not None:
            output = self.tamper(template, output)
        return output, list(context.touched)

    def _record(self, step_type: StepType, turn: int, content: str, used: list[str],
                sufficient: list[str], *, step_id: str | None = None, **fields: Any) -> ExecutionStep:
        prev = [self.steps[-1].step_id] if self.steps else []
        step = self.recorder.step(
            step_id=step_id or self._next_step_id(), step_type=step_type, content=content,
            prev_step_ids=prev, next_step_ids=[],
            invalidated_memory_ids=fields.pop("invalidated", []),
            generated_memory_ids=fields.pop("generated", []), used_ids=used,
            sufficient_ids=[s for s in sufficient if s in used], timestamp=self._tick(),
            turn=turn, **{k: v for k, v in fields.items() if v is not None})
        self.steps.append(step)
        return step

    def _next_memory_id(self) -> str:
        return allocate_id("m_", set(self.memories), start=len(self.memories) + 1)

    def _next_step_id(self) -> str:
        return f"s_{len(self.steps) + 1:03d}"

    def _tick(self) -> int:
        self.clock += 1
        return self.clock


def _words(memory: MemoryRecord) -> set[str]:
    text = " ".join(filter(None, [memory.content, memory.entity_id, memory.fact_key]))
    return set(WORD.findall(text.lower()))


def _content(output: StepOutput) -> str:
    return output.content if output.content is not None else \
        f"(unresolved: {output.unresolved or 'no value'})"
