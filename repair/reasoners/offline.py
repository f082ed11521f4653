"""The offline reasoner: deterministic, from each step's `derivation` and `facts`.

It reads only the repaired context handed to it. When a value cannot be derived (no
derivation, an unresolved lookup) it leaves it out and says so: it never copies a value from
the old step, the clean trace or the evaluation block. A tool action without a derivation is
re-issued with its recorded call (noted), since the call is what refreshes its observation.
"""

from __future__ import annotations

from typing import Any

from provrepair.provenance.models import Fact
from provrepair.provenance.vocab import StepType
from provrepair.repair.derive import Context, ToolCall, Unresolved, evaluate
from provrepair.repair.reasoners.base import StepOutput, StepRequest, unresolved


class OfflineReasoner:
    name = "offline"

    def regenerate(self, request: StepRequest) -> StepOutput:
        step = request.step
        cited = [i for i in step.used_ids if i in request.visible_ids()]
        if step.step_type is StepType.TOOL_ACTION:
            return self._tool_action(request, cited)
        if step.derivation is None:
            return unresolved("no derivation recorded: the offline reasoner cannot regenerate "
                              "this step's content", cited)
        try:
            content = evaluate(step.derivation, request.context)
            facts = recompute_facts(step.facts, request.context)
        except Unresolved as exc:
            return unresolved(str(exc), cited)
        return StepOutput(content=str(content), cited_ids=cited, facts=facts)

    def _tool_action(self, request: StepRequest, cited: list[str]) -> StepOutput:
        step = request.step
        if step.derivation is None:
            if step.tool_name is None:
                return unresolved("tool action without tool_name or derivation", cited)
            call = ToolCall(step.tool_name, dict(step.tool_args or {}))
            return StepOutput(content=call.content(), cited_ids=cited, tool_call=call,
                              notes=["no derivation: the recorded call was re-issued"])
        try:
            call = evaluate(step.derivation, request.context)
        except Unresolved as exc:
            return unresolved(str(exc), cited)
        if not isinstance(call, ToolCall):
            return unresolved("the derivation of a tool action must be a tool_call", cited)
        return StepOutput(content=call.content(), cited_ids=cited, tool_call=call)


def recompute_facts(facts: list[Fact] | None, ctx: Context) -> list[Fact] | None:
    """Facts carrying a derivation are recomputed; the others are constants of the step."""
    if facts is None:
        return None
    out = []
    for fact in facts:
        if fact.derivation is None:
            out.append(fact)
            continue
        value: Any = evaluate(fact.derivation, ctx)
        out.append(fact.model_copy(update={"fact_value": value}))
    return out
