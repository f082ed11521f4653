"""A small tool-using shopping agent with a memory, instrumented with the real OpenTelemetry
SDK under the GenAI conventions loaders/otel.py reads, calling the real `openai` client (the
suite points it at the test double of tests/openai_double.py). Its memory is a dict."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.trace import Tracer

from provrepair.loaders.otel_live import memory_span

PRICES = {"StoreA": "$68.50"}


def text_parts(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "content": text}]


def chat(tracer: Tracer, client: Any, conversation: str,
         messages: list[dict[str, Any]]) -> Any:
    """One inference span with the input and output messages as attributes."""
    with tracer.start_as_current_span("chat double-model") as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.conversation.id", conversation)
        span.set_attribute("gen_ai.input.messages", json.dumps(
            [{"role": m["role"], "parts": text_parts(str(m.get("content") or ""))}
             for m in messages]))
        reply = client.chat.completions.create(model="double-model", messages=messages)
        message = reply.choices[0].message
        parts = text_parts(message.content) if message.content else []
        parts += [{"type": "tool_call", "id": c.id, "name": c.function.name,
                   "arguments": c.function.arguments} for c in message.tool_calls or []]
        span.set_attribute("gen_ai.output.messages", json.dumps(
            [{"role": "assistant", "parts": parts}]))
        return message


def run(tracer: Tracer, client: Any, memory: dict[str, str], conversation: str,
        faults: list[str]) -> None:
    with tracer.start_as_current_span("invoke_agent shopper") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.conversation.id", conversation)
        root.set_attribute("provrepair.domain", "shopping")
        root.set_attribute("provrepair.diagnosed_faults", faults)
        question = "Where is the P0199 headset cheapest? Remember the store."
        found = [{"id": k, "content": v} for k, v in sorted(memory.items())]
        with memory_span(tracer, "search_memory", records=found, query="P0199 prices",
                         conversation_id=conversation):
            pass
        messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
        call = chat(tracer, client, conversation, messages).tool_calls[0]
        with tracer.start_as_current_span(f"execute_tool {call.function.name}") as span:
            span.set_attribute("gen_ai.operation.name", "execute_tool")
            span.set_attribute("gen_ai.conversation.id", conversation)
            span.set_attribute("gen_ai.tool.call.id", call.id)
            store = json.loads(call.function.arguments)["store"]
            span.set_attribute("gen_ai.tool.call.result", f"{store}: {PRICES[store]}")
        answer = chat(tracer, client, conversation, messages).content
        memory["m_best"] = answer
        with memory_span(tracer, "create_memory", record_id="m_best",
                         records=[{"id": "m_best", "content": answer}],
                         conversation_id=conversation):
            pass
