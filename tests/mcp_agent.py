"""A small shopping agent as a user would write one: the real `openai` client (instrumented by
the real opentelemetry-instrumentation-openai-v2 when a test records it), its tools on an MCP
server (tests/mcp_tool_server.py, over stdio with the official `mcp` client) and its memory in
a LangGraph `SqliteStore`. It finds where the P0199 headset is cheapest, orders it there and
emails the user about it (two tool calls in one reply, run one after the other), and
remembers the answer; its memory operations are traced with `memory_span` (LangGraph's store
has no instrumentation of its own).

`AgentModel` is what the suite's OpenAI double (tests/openai_double.py) answers the agent's own
chat requests with: it reads the prices in the prompt (what the agent remembers, what its tools
returned) and decides like a model would, so the agent's choice follows its memory.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

from langgraph.store.sqlite import SqliteStore
from mcp import Client, StdioServerParameters
from opentelemetry.trace import Tracer

from provrepair.loaders.otel_live import memory_span
from tests import otel_agent
from tests.openai_double import Reply

REPO = Path(__file__).resolve().parents[1]
TOOLS = [
    {"type": "function", "function": {
        "name": "get_price", "description": "The store's price of the P0199 headset",
        "parameters": {"type": "object", "properties": {"store": {"type": "string"}},
                       "required": ["store"]}}},
    {"type": "function", "function": {
        "name": "place_order", "description": "Order the P0199 headset at the store",
        "parameters": {"type": "object", "properties": {"store": {"type": "string"}},
                       "required": ["store"]}}},
    {"type": "function", "function": {
        "name": "send_email", "description": "Email someone",
        "parameters": {"type": "object", "properties": {"to": {"type": "string"},
                                                        "body": {"type": "string"}},
                       "required": ["to", "body"]}}},
]
USER = "me@example.com"
QUESTION = "Order the P0199 headset where it is cheapest. Remember the store."
PRICE = re.compile(r"(Store[A-Z])\b[^$]*?\$(\d+\.\d\d)")


def server_command() -> list[str]:
    return [sys.executable, "-m", "tests.mcp_tool_server"]


def server_env(log: Path) -> dict[str, str]:
    return {"PYTHONPATH": str(REPO), "PROVREPAIR_TEST_MCP_LOG": str(log)}


def memory_store(path: Path) -> SqliteStore:
    store = SqliteStore(sqlite3.connect(path, check_same_thread=False, isolation_level=None))
    store.setup()
    return store


def remembered(store: SqliteStore) -> dict[str, str]:
    return {item.key: item.value["content"]
            for item in store.search(("memories",), limit=100)}


async def _call_tool(log: Path, name: str, args: dict[str, Any]) -> str:
    command = server_command()
    params = StdioServerParameters(command=command[0], args=command[1:], env=server_env(log))
    async with Client(params) as client:
        result = await client.call_tool(name, args)
    return "\n".join(getattr(c, "text", "") for c in result.content)


def run(tracer: Tracer, client: Any, memory: SqliteStore, conversation: str, faults: list[str],
        log: Path) -> str:
    """One agent run: search memory, ask the model, run the tools it calls, answer, remember."""
    with otel_agent.agent_run(tracer, conversation, faults, remembered(memory),
                              QUESTION) as messages:
        while True:
            reply = client.chat.completions.create(model="agent-model", messages=messages,
                                                   tools=TOOLS).choices[0].message
            messages.append(reply.model_dump(exclude_none=True))
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": _traced_tool(tracer, call, conversation, log)})
        answer = str(reply.content)
        memory.put(("memories",), "m_best", {"content": answer})
        with memory_span(tracer, "create_memory", record_id="m_best",
                         records=[{"id": "m_best", "content": answer}],
                         conversation_id=conversation):
            pass
        return answer


def _traced_tool(tracer: Tracer, call: Any, conversation: str, log: Path) -> str:
    with tracer.start_as_current_span(f"execute_tool {call.function.name}") as span:
        span.set_attribute("gen_ai.operation.name", "execute_tool")
        span.set_attribute("gen_ai.conversation.id", conversation)
        span.set_attribute("gen_ai.tool.call.id", call.id)
        result = asyncio.run(_call_tool(log, call.function.name,
                                        json.loads(call.function.arguments)))
        span.set_attribute("gen_ai.tool.call.result", result)
        return result


def cheapest(text: str) -> tuple[str, str]:
    """The cheapest (store, price) the text states."""
    prices = {store: float(price) for store, price in PRICE.findall(text)}
    store = min(prices, key=lambda s: (prices[s], s))
    return store, f"${prices[store]:.2f}"


def agent_reply(body: dict[str, Any]) -> Reply:
    """The model's decision for the agent's own request: price the store it knows nothing of,
    order at the cheapest store it knows and email the user about it (both at once), then say
    where it ordered."""
    messages = body["messages"]
    said = " ".join(str(m.get("content") or "") for m in messages)
    results = [str(m.get("content")) for m in messages if m.get("role") == "tool"]
    if not results:
        return _calls(len(messages), ("get_price", {"store": "StoreA"}))
    if not any(r.startswith("order placed") for r in results):
        return _calls(len(messages), *order_calls(said))
    ordered = next(r for r in results if r.startswith("order placed"))
    store, price = re.findall(r"order placed at (Store[A-Z]) \((\$[\d.]+)\)", ordered)[0]
    return Reply(f"Ordered the P0199 headset at {store} for {price}, the cheapest.")


def order_calls(said: str) -> list[tuple[str, dict[str, str]]]:
    """The order at the cheapest store the text states, and the email telling the user."""
    store, price = cheapest(said)
    return [("place_order", {"store": store}),
            ("send_email", {"to": USER, "body": f"Ordering the P0199 headset at {store} for "
                                                f"{price}."})]


def _calls(n: int, *calls: tuple[str, dict[str, str]]) -> Reply:
    return Reply(tool_calls=[{"id": f"call_{n}_{i}", "type": "function", "function": {
        "name": tool, "arguments": json.dumps(args)}} for i, (tool, args) in enumerate(calls)])


# -- the model a repair talks to (--reasoner openai) --------------------------------------------

REPAIRING = "You are repairing one step of an agent run"


def model(body: dict[str, Any]) -> Reply:
    """The stand-in model behind the double: the repair's prompt contracts
    (repair/reasoners/prompts.py), or the agent's own requests."""
    system = str(body["messages"][0].get("content") or "")
    return repair_reply(body) if REPAIRING in system else agent_reply(body)


def repair_reply(body: dict[str, Any]) -> Reply:
    """A strict-JSON answer to the contract in the system prompt, decided from the repaired
    context only (the untrusted old call is read for which tool it was, never for its store)."""
    system = str(body["messages"][0]["content"])
    context = json.loads(body["messages"][-1]["content"])
    target = context["target"]
    seen = [m["content"] for m in context["memories"]] + [s["content"] for s in context["steps"]]
    cited = [m["id"] for m in context["memories"]] + [s["id"] for s in context["steps"]]
    if "Issue exactly one replacement call" in system:
        tool = target["untrusted_old_call"]["tool_name"]
        args = {"store": "StoreA"} if tool == "get_price" else \
            dict(order_calls(" ".join(seen)))[tool]
        out: dict[str, Any] = {"target_step_id": target["step_id"], "tool_name": tool,
                               "tool_args": args, "cited_ids": cited}
    else:
        orders = [c for c in seen if c.startswith("order placed")]
        content = (agent_reply({"messages": [{"role": "tool", "content": c} for c in orders]})
                   .content if orders else "Price the stores, then order at the cheapest.")
        out = {"content": content, "cited_ids": cited, "facts": []}
        if "Produce one replacement for the superseded memory" in system:
            out["target_step_id"] = target["step_id"]
    return Reply(json.dumps(out), tokens=120)
