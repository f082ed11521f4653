"""The reasoner interface: what the executor (and the agent runtime) asks to regenerate a step.

One request per step to regenerate: the step's type and original record (an untrusted hint:
its old values may be contaminated), the repaired visible context, and the tools. A reasoner
returns the new content (or says it cannot), the evidence it cites (only ids visible in the
context), recomputed facts, a tool call for a tool action, and what it cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from provrepair.provenance.models import ExecutionStep, Fact, MemoryRecord, ToolSpec, UserInput
from provrepair.repair.derive import Context, ToolCall


@dataclass
class StepRequest:
    step: ExecutionStep                     # the original step (untrusted hint)
    domain: str
    context: Context                        # visible facts (for derivations)
    inputs: list[UserInput]                 # visible user inputs
    memories: list[MemoryRecord]            # visible active memories
    steps: list[ExecutionStep]              # visible earlier steps (preserved or replayed)
    tools: list[ToolSpec] = field(default_factory=list)

    def visible_ids(self) -> set[str]:
        return ({u.input_id for u in self.inputs} | {m.memory_id for m in self.memories}
                | {s.step_id for s in self.steps})


@dataclass
class StepOutput:
    content: str | None                     # None: unresolved (the answer lacks the fact)
    cited_ids: list[str] = field(default_factory=list)
    facts: list[Fact] | None = None
    tool_call: ToolCall | None = None
    unresolved: str | None = None           # why it could not be regenerated
    notes: list[str] = field(default_factory=list)
    llm_calls: int = 0
    tokens: int = 0


class Reasoner(Protocol):
    name: str

    def regenerate(self, request: StepRequest) -> StepOutput:
        """Regenerate a claim, plan, final answer, tool action or memory mutation."""
        ...


def unresolved(reason: str, cited: list[str] | None = None) -> StepOutput:
    return StepOutput(content=None, cited_ids=cited or [], unresolved=reason)


def dump_facts(facts: list[Fact] | None) -> list[dict[str, Any]]:
    return [f.model_dump(mode="json") for f in facts or []]
