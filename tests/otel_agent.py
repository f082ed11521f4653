"""A small tool-using shopping agent with a memory, traced the way a user's agent is: the real
`openai` client instrumented by the real `opentelemetry-instrumentation-openai-v2` (its `chat`
spans carry the messages), its own `invoke_agent` and `execute_tool` spans, and the memory
operations from `memory_span` (its memory, a dict, has no instrumentation). The suite points
the client at the test double of tests/openai_double.py.

`python -m tests.otel_agent PATH` writes the bundled example (examples/otel/) with the
scripted replies of `example_script()`; tests/integration/test_otel.py checks it is still what
this agent records.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest.mock import patch

import openai
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Tracer

from provrepair.loaders.otel_live import OtlpJsonFile, memory_span
from tests.openai_double import ChatDouble, Reply

PRICES = {"StoreA": "$68.50"}
TOOLS = [{"type": "function", "function": {
    "name": "get_price", "description": "The store's price of the P0199 headset",
    "parameters": {"type": "object", "properties": {"store": {"type": "string"}}}}}]
# Message content on the chat spans (the instrumentation's default records none; without the
# opt-in it would write it as log events only).
CONTENT_ON_SPANS = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"}
EXAMPLE_MEMORY = {"m_price_b": "StoreB sells P0199 for $59.99",
                  "m_price_c": "StoreC sells P0199 for $63.99"}


@contextmanager
def openai_instrumented(provider: TracerProvider) -> Iterator[None]:
    """The official openai-v2 instrumentation on `provider`, message content on spans."""
    with patch.dict(os.environ, CONTENT_ON_SPANS):
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            yield
        finally:
            instrumentor.uninstrument()


def chat(client: Any, messages: list[dict[str, Any]]) -> Any:
    reply = client.chat.completions.create(model="double-model", messages=messages, tools=TOOLS)
    return reply.choices[0].message


@contextmanager
def agent_run(tracer: Tracer, conversation: str, faults: list[str], memory: dict[str, str],
              question: str) -> Iterator[list[dict[str, Any]]]:
    """The run's `invoke_agent` span and its memory search; yields the first messages."""
    with tracer.start_as_current_span("invoke_agent shopper") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.conversation.id", conversation)
        root.set_attribute("provrepair.domain", "shopping")
        root.set_attribute("provrepair.diagnosed_faults", faults)
        found = [{"id": k, "content": v} for k, v in sorted(memory.items())]
        with memory_span(tracer, "search_memory", records=found, query="P0199 prices",
                         conversation_id=conversation):
            pass
        notes = "; ".join(r["content"] for r in found)
        yield [{"role": "system", "content": f"What you remember: {notes}"},
               {"role": "user", "content": question}]


def run(tracer: Tracer, client: Any, memory: dict[str, str], conversation: str,
        faults: list[str]) -> None:
    question = "Where is the P0199 headset cheapest? Remember the store."
    with agent_run(tracer, conversation, faults, memory, question) as messages:
        asked = chat(client, messages)
        messages.append(asked.model_dump(exclude_none=True))
        for call in asked.tool_calls or []:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": execute_tool(tracer, call, conversation)})
        answer = chat(client, messages).content
        memory["m_best"] = answer
        with memory_span(tracer, "create_memory", record_id="m_best",
                         records=[{"id": "m_best", "content": answer}],
                         conversation_id=conversation):
            pass


def execute_tool(tracer: Tracer, call: Any, conversation: str) -> str:
    with tracer.start_as_current_span(f"execute_tool {call.function.name}") as span:
        span.set_attribute("gen_ai.operation.name", "execute_tool")
        span.set_attribute("gen_ai.conversation.id", conversation)
        span.set_attribute("gen_ai.tool.call.id", call.id)
        store = json.loads(call.function.arguments)["store"]
        result = f"{store}: {PRICES[store]}"
        span.set_attribute("gen_ai.tool.call.result", result)
        return result


def example_script(answer: str) -> list[Reply]:
    call = {"id": "call_1", "type": "function",
            "function": {"name": "get_price", "arguments": json.dumps({"store": "StoreA"})}}
    return [Reply(tool_calls=[call]), Reply(answer)]


def record_example(path: Path) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFile(path)))
    double = ChatDouble(example_script(
        "StoreB is cheapest at $59.99 (StoreC $63.99, StoreA $68.50)."))
    client = openai.OpenAI(base_url=double.start(), api_key="example")
    try:
        with openai_instrumented(provider):
            run(provider.get_tracer("shopping-agent"), client, dict(EXAMPLE_MEMORY),
                "otel_shopping_001", ["m_price_b"])
    finally:
        double.stop()
        provider.shutdown()


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.unlink(missing_ok=True)
    record_example(target)
