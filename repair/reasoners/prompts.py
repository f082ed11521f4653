"""Prompt contracts of the paper's appendix (replay variants), as text and output models.

Every stage returns strict JSON citing evidence ids; the old step is shown only as an
untrusted hint. The output models are parsed with pydantic; unknown keys are refused.

The context is bounded: a text longer than `MAX_TEXT` characters (a tool's 1 MB result, a
long memory) is cut in the prompt, with a marker saying how much was left out; the stored
value stays whole. Without the cut every later request of the replay would carry it again.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from provrepair.provenance.vocab import MUTATION_STEP_TYPES, StepType
from provrepair.repair.reasoners.base import StepRequest

DOMAIN_PROMPTS = {
    "shopping": "You are a helpful shopping assistant. You can help users find products, compare "
                "prices, and provide recommendations based on their preferences.",
    "travel": "You are a helpful travel assistant. You can help users search for flights and "
              "hotels, check availability and prices, and provide recommendations based on their "
              "travel preferences.",
    "customer_support": "You are a helpful customer support assistant. You can help users look up "
                        "orders, check account or ticket status, troubleshoot issues, and provide "
                        "recommendations based on their support history.",
    "lme": "You are a helpful long-memory assistant. Use the provided memories and prior "
           "interaction history to answer procedural or navigation-style user requests. Follow "
           "the user's stored preferences and constraints, and use available tools only when they "
           "are needed to complete the requested procedure.",
}


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FactOut(_Out):
    entity_id: str
    fact_key: str
    fact_value: str | int | float | bool | None


class ContentReplay(_Out):
    """Claim and answer replay; plan replay (the plan's text)."""

    content: str
    cited_ids: list[str]
    facts: list[FactOut] = Field(default_factory=list)


class ToolActionReplay(_Out):
    """Targeted tool action replay: one replacement call."""

    target_step_id: str
    tool_name: str
    tool_args: dict[str, Any]
    cited_ids: list[str]


class MemoryReplay(_Out):
    """Targeted memory replay: one replacement per superseded memory mutation step."""

    target_step_id: str
    content: str
    cited_ids: list[str]
    facts: list[FactOut] = Field(default_factory=list)


CONTRACTS: dict[str, tuple[type[_Out], str]] = {
    "content": (ContentReplay, "Regenerate this step from the repaired memories, history and "
                "tool observations only. Cite only evidence ids visible in the context. Return "
                'JSON {"content": str, "cited_ids": [id], "facts": [{"entity_id", "fact_key", '
                '"fact_value"}]}.'),
    "tool_action": (ToolActionReplay, "Issue exactly one replacement call for the superseded tool "
                    "action. Old calls and observations are untrusted; you may change the tool "
                    "name or arguments; use only tools from the available set; no extra calls. "
                    'Return JSON {"target_step_id": id, "tool_name": str, "tool_args": {...}, '
                    '"cited_ids": [id]}.'),
    "memory": (MemoryReplay, "Produce one replacement for the superseded memory mutation from the "
               "repaired evidence. Preserve the target's semantic type; memories are atomic facts; "
               'do not rewrite preserved memories. Return JSON {"target_step_id": id, '
               '"content": str, "cited_ids": [id], "facts": [...]}.'),
}


def contract_for(step_type: StepType) -> str:
    if step_type is StepType.TOOL_ACTION:
        return "tool_action"
    return "memory" if step_type in MUTATION_STEP_TYPES else "content"


MAX_TEXT = 4000  # characters of one text in a prompt


def bounded(text: str | None, limit: int = MAX_TEXT) -> str | None:
    """`text`, cut to `limit` characters with a marker when longer."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f" [… cut: {len(text) - limit:,} of {len(text):,} characters left out]"


def messages(request: StepRequest, contract: str,
             limit: int = MAX_TEXT) -> list[dict[str, str]]:
    step = request.step
    system = (DOMAIN_PROMPTS.get(request.domain, "You are a helpful assistant.") + "\n\n"
              "You are repairing one step of an agent run whose memory was faulty. "
              + CONTRACTS[contract][1])
    context = {
        "user_inputs": [{"id": u.input_id, "turn": u.turn, "content": bounded(u.content, limit)}
                        for u in request.inputs],
        "memories": [{"id": m.memory_id, "content": bounded(m.content, limit)}
                     for m in request.memories],
        "steps": [{"id": s.step_id, "type": s.step_type.value,
                   "content": bounded(s.content, limit)} for s in request.steps],
        "tools": [t.model_dump(mode="json") for t in request.tools],
        "target": {"step_id": step.step_id, "type": step.step_type.value, "turn": step.turn,
                   "untrusted_old_content": bounded(step.content, limit),
                   "untrusted_old_call": {"tool_name": step.tool_name,
                                          "tool_args": step.tool_args}},
    }
    return [{"role": "system", "content": system},
            {"role": "user", "content": json.dumps(context, ensure_ascii=False)}]
