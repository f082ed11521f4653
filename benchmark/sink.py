"""`CaseSink`: a ProvenanceSink that builds a case in memory instead of writing a store.

It accepts the same events as `provenance.recorder.Recorder` (user_input, memory, step,
faults), validates each at once with the same `CaseValidator` and `parse_model`, applies the
same rule for re-recorded memories (only lifecycle fields may change), and returns a
`provenance.models.Case`. No database is needed to generate the benchmark.
"""

from __future__ import annotations

from typing import Any

from provrepair.provenance.models import Case, Evaluation, ExecutionStep, MemoryRecord, ToolSpec, UserInput
from provrepair.provenance.parsing import parse_event
from provrepair.provenance.validate import CaseValidator, check_lifecycle_change


class CaseSink:
    def __init__(self, task_id: str, *, domain: str, tools: list[ToolSpec],
                 world: dict[str, Any]):
        self.task_id, self.domain, self.tools, self.world = task_id, domain, tools, world
        self.validator = CaseValidator(task_id)
        self.inputs: list[UserInput] = []
        self.memories: dict[str, MemoryRecord] = {}
        self.steps: list[ExecutionStep] = []
        self.diagnosed: list[str] = []

    def user_input(self, record: UserInput | None = None, **fields: Any) -> UserInput:
        parsed: UserInput = self._parse(UserInput, record, fields, "user_input")
        self.validator.add_input(parsed, "user_input")
        self.inputs.append(parsed)
        return parsed

    def memory(self, record: MemoryRecord | None = None, **fields: Any) -> MemoryRecord:
        parsed: MemoryRecord = self._parse(MemoryRecord, record, fields, "memory")
        old = self.memories.get(parsed.memory_id)
        if old is None:
            self.validator.add_memory(parsed, "memory")
        elif old != parsed:
            self._check_lifecycle_only(old, parsed)
        self.memories[parsed.memory_id] = parsed
        return parsed

    def step(self, record: ExecutionStep | None = None, **fields: Any) -> ExecutionStep:
        parsed: ExecutionStep = self._parse(ExecutionStep, record, fields, "step")
        self.validator.add_step(parsed, "step")
        self.steps.append(parsed)
        return parsed

    def faults(self, memory_ids: list[str]) -> None:
        self.validator.add_faults(memory_ids)
        self.diagnosed = list(dict.fromkeys(memory_ids))

    def case(self, evaluation: Evaluation | None = None) -> Case:
        """The case recorded so far; every pending reference must have resolved."""
        self.validator.finish()
        return Case(format="provrepair.case/1", task_id=self.task_id, domain=self.domain,
                    session=list(self.inputs), memory_store=list(self.memories.values()),
                    trace=list(self.steps), diagnosed_faults=list(self.diagnosed),
                    tools=list(self.tools), world=self.world, evaluation=evaluation)

    # -- internals --------------------------------------------------------------------------

    def _parse(self, model: type[Any], record: Any, fields: dict[str, Any], kind: str) -> Any:
        return record if record is not None else parse_event(model, fields, self.task_id, kind)

    def _check_lifecycle_only(self, old: MemoryRecord, new: MemoryRecord) -> None:
        check_lifecycle_change(self.validator, old, new)
