"""A shape run (benchmark/trace_shapes.py) as an outside agent would have traced it, and read
back by the loaders: OTLP made with the real OpenTelemetry SDK (one trace per user turn,
`invoke_agent` roots sharing the conversation id; messages as JSON strings or structured
values; or the SDK's protobuf encoding) and OpenAI-style transcripts (with each call's
request and what each write stores, with requests only, or the plain message list).

A sub-agent runs inside its parent's `execute_tool` span (nested), or in a trace of its own
whose `invoke_agent` span links to it under a conversation id of its own (linked); the tool
span ends, and its result exists, after the sub-agent's work. In a transcript every model
call is an assistant message (a request log of every call, sub-agents' too).

`origin` maps each native step to where the read-back run says it came from (span id,
`<span>#reasoning`, `call <id>`, `messages[i]`, `memory_events[k]`):
benchmark/soundness.py maps ids through it. `read_back` (loaders/trace_export.py) reads an
export with the loader of its format.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from opentelemetry import context, trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import Link, Status, StatusCode

from provrepair.benchmark.trace_shapes import Logged, Msg, ShapeRun
from provrepair.loaders.agent_run import REASONING
from provrepair.loaders.otel_live import otlp_json
from provrepair.loaders.trace_export import Exported, as_structured, chat_message
from provrepair.loaders.trace_export import read_back as read_back

MS = 1_000_000


class _Ids(IdGenerator):
    """A new trace id for every root span, span ids 1, 2, 3…"""

    def __init__(self, salt: int):
        self.salt, self.traces, self.spans = salt, 0, 0

    def generate_trace_id(self) -> int:
        self.traces += 1
        return (self.salt << 32) | self.traces

    def generate_span_id(self) -> int:
        self.spans += 1
        return self.spans


def genai(msg: Msg) -> dict[str, Any]:
    """A request message in the GenAI shape (role + parts)."""
    if msg.role == "tool":
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": msg.call_id,
                                           "response": msg.text}]}
    parts: list[dict[str, Any]] = [{"type": "text", "content": msg.text}] if msg.text else []
    parts += [{"type": "text", "content": f"[{r}]", "memory_record_id": r} for r in msg.records]
    parts += [{"type": "tool_call", "id": c, "name": n, "arguments": a} for c, n, a in msg.calls]
    return {"role": msg.role, "parts": parts}


def _output(entry: Logged) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if entry.reasoning:
        parts.append({"type": "reasoning", "content": entry.reasoning})
    if entry.text:
        parts.append({"type": "text", "content": entry.text})
    parts += [{"type": "tool_call", "id": c, "name": n, "arguments": a}
              for c, n, a in entry.calls]
    return [{"role": "assistant", "parts": parts}]


def _records(entry: Logged) -> list[dict[str, Any]]:
    return [{"id": w.record_id, **({"content": w.content} if w.content else {}),
             "metadata": {"derived_from": list(w.derived_from),
                          **({"supersedes": list(w.supersedes)} if w.supersedes else {})}}
            for w in entry.records]


# -- OpenTelemetry ---------------------------------------------------------------------------

def otel_spans(run: ShapeRun) -> tuple[list[ReadableSpan], dict[str, str]]:
    """The run as SDK spans, and native step → origin."""
    keep = InMemorySpanExporter()
    provider = TracerProvider(id_generator=_Ids(len(run.log)),
                              resource=Resource.create({"service.name": "shape-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(keep))
    tracer = provider.get_tracer("shape-agent", "1.0")
    task = run.case.task_id
    origin: dict[str, str] = {}
    made: dict[str, Any] = {}  # native step → its span
    tools: dict[str, Any] = {}  # call id → an open execute_tool span (a sub-agent inside)
    agents: list[tuple[Any, str]] = []  # open sub-agent spans and their conversation ids
    root: Any = None

    def parent() -> Any:
        return trace.set_span_in_context(agents[-1][0] if agents else root)

    def conversation() -> str:
        return agents[-1][1] if agents else task

    def span(name: str, entry: Logged, attributes: dict[str, Any],
             links: tuple[str, ...] = ()) -> Any:
        made_span = tracer.start_span(
            name, context=parent(), start_time=entry.ts * MS,
            attributes={"gen_ai.conversation.id": conversation(), **attributes},
            links=[Link(made[x].get_span_context()) for x in links if x in made])
        if entry.failed:
            made_span.set_status(Status(StatusCode.ERROR, "the operation failed"))
        made_span.end(end_time=entry.ts * MS + 1)
        made[entry.step] = made_span
        origin[entry.step] = _hex(made_span)
        return made_span

    last = max(e.ts for e in run.log) + 10
    for entry in run.log:
        if entry.kind == "user":
            if root is not None:
                root.end(end_time=entry.ts * MS - 1)
            root = tracer.start_span("invoke_agent", context=context.Context(),
                                     start_time=entry.ts * MS - 5, attributes={
                                         "gen_ai.operation.name": "invoke_agent",
                                         "gen_ai.conversation.id": task})
        elif entry.kind == "chat":
            chat = span("chat", entry, {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([genai(m) for m in entry.request]),
                "gen_ai.output.messages": json.dumps(_output(entry))})
            if entry.reasoning_step:
                origin[entry.reasoning_step] = f"{_hex(chat)}{REASONING}"
            for action, (call, _, _) in zip(entry.actions, entry.calls, strict=True):
                origin[action] = f"call {call}"
        elif entry.kind == "agent" and not entry.end:
            tool = tracer.start_span("execute_tool", context=parent(),
                                     start_time=entry.ts * MS + 2,
                                     attributes={"gen_ai.operation.name": "execute_tool",
                                                 "gen_ai.conversation.id": conversation(),
                                                 "gen_ai.tool.call.id": entry.parent_call,
                                                 "gen_ai.tool.name": "research"})
            tools[entry.parent_call] = tool
            own = f"{task}/{entry.agent}" if entry.linked else conversation()
            agent = tracer.start_span(
                "invoke_agent", start_time=entry.ts * MS + 3,
                context=context.Context() if entry.linked else trace.set_span_in_context(tool),
                links=[Link(tool.get_span_context())] if entry.linked else [],
                attributes={"gen_ai.operation.name": "invoke_agent",
                            "gen_ai.agent.name": entry.agent, "gen_ai.conversation.id": own})
            agents.append((agent, own))
        elif entry.kind == "agent":
            agents.pop()[0].end(end_time=entry.ts * MS + 5)
        elif entry.kind == "tool":
            attributes = {"gen_ai.operation.name": "execute_tool",
                          "gen_ai.tool.call.id": entry.call_id,
                          "gen_ai.tool.call.result": entry.text}
            if entry.call_id in tools:  # ran a sub-agent: its span ends with the result
                tool = tools.pop(entry.call_id)
                tool.set_attributes(attributes)
                if entry.failed:
                    tool.set_status(Status(StatusCode.ERROR, "the tool failed"))
                tool.end(end_time=entry.ts * MS)
                made[entry.step] = tool
                origin[entry.step] = _hex(tool)
            else:
                span("execute_tool", entry, {**attributes, "gen_ai.tool.name": "tool"})
        elif entry.kind == "search":
            span("search_memory", entry, {"gen_ai.operation.name": "search_memory",
                                          "gen_ai.memory.query.text": entry.text,
                                          "gen_ai.memory.records": json.dumps(_records(entry))})
        elif entry.kind == "write":
            span(f"{entry.op}_memory", entry, {
                "gen_ai.operation.name": f"{entry.op}_memory",
                "gen_ai.memory.records": json.dumps(_records(entry))}, entry.links)
    if root is not None:
        root.end(end_time=last * MS)
    provider.shutdown()
    return list(keep.get_finished_spans()), origin


def _hex(span: Any) -> str:
    return format(span.get_span_context().span_id, "016x")


def export_otel(run: ShapeRun, encoding: str = "json") -> Exported:
    """`encoding`: json (messages as JSON strings), structured (AnyValue lists and maps) or
    protobuf (the SDK's OTLP encoder's bytes)."""
    spans, origin = otel_spans(run)
    if encoding == "protobuf":
        return Exported(bytes(encode_spans(spans).SerializeToString()), origin)
    document = otlp_json(spans)
    return Exported(as_structured(document) if encoding == "structured" else document, origin)


# -- transcripts -----------------------------------------------------------------------------

def export_transcript(run: ShapeRun, requests: bool = True, evidence: bool = True) -> Exported:
    """The run as a transcript; `requests`: with each call's request; `evidence` (with
    requests): each write names what it stores (as the OTel export's span links do, when
    the run has them)."""
    messages: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    sent: list[dict[str, Any]] = []
    origin: dict[str, str] = {}
    emitted: set[int] = set()  # request messages already in the conversation (by identity)
    turns = {e.step for e in run.log if e.kind == "user"}  # native user inputs
    for entry in run.log:
        after = len(messages) - 1
        if entry.kind == "user":
            messages.append({"role": "user", "content": entry.text})
            origin[entry.step] = f"messages[{len(messages) - 1}]"
        elif entry.kind == "chat":
            if entry.agent == "main":  # what the conversation itself shows the model
                for m in entry.request:
                    if m.role in ("system", "user") and id(m) not in emitted and not (
                            m.role == "user" and set(m.refs) <= turns):
                        messages.append(chat_message(genai(m)))
                emitted.update(id(m) for m in entry.request)
            message: dict[str, Any] = {"role": "assistant", "content": entry.text or None}
            if entry.reasoning:
                message["reasoning_content"] = entry.reasoning
            if entry.calls:
                message["tool_calls"] = [{"id": c, "type": "function", "function": {
                    "name": n, "arguments": json.dumps(a)}} for c, n, a in entry.calls]
            messages.append(message)
            sent.append({"messages": [chat_message(genai(m)) for m in entry.request]})
            where = f"messages[{len(messages) - 1}]"
            origin[entry.step] = where
            if entry.reasoning_step:
                origin[entry.reasoning_step] = f"{where}{REASONING}"
            for action, (call, _, _) in zip(entry.actions, entry.calls, strict=True):
                origin[action] = f"call {call}"
        elif entry.kind == "tool":
            messages.append({"role": "tool", "tool_call_id": entry.call_id,
                             "content": entry.text})
            origin[entry.step] = f"messages[{len(messages) - 1}]"
        elif entry.kind == "search":
            events.append({"after": after, "op": "search", "query": entry.text,
                           "records": [{"id": w.record_id, "content": w.content,
                                        "derived_from": list(w.derived_from),
                                        "supersedes": list(w.supersedes)}
                                       for w in entry.records]})
            origin[entry.step] = f"memory_events[{len(events) - 1}]"
        elif entry.kind == "write":
            records = [{"id": w.record_id, "content": w.content,
                        "derived_from": list(w.derived_from), "supersedes": list(w.supersedes)}
                       for w in entry.records]
            event: dict[str, Any] = {"after": after, "op": entry.op, "failed": entry.failed,
                                     **(records[0] if len(records) == 1 else
                                        {"records": records})}
            cites = [origin.get(x) for x in entry.links]
            if requests and evidence and cites and all(cites):
                event["evidence"] = cites
            events.append(event)
            origin[entry.step] = f"memory_events[{len(events) - 1}]"
    transcript = {"task_id": run.case.task_id, "messages": messages, "memory_events": events}
    return Exported({**transcript, "requests": sent} if requests else transcript, origin)


EXPORTS: dict[str, Callable[[ShapeRun], Exported]] = {
    "otel-json": lambda r: export_otel(r, "json"),
    "otel-structured": lambda r: export_otel(r, "structured"),
    "otel-protobuf": lambda r: export_otel(r, "protobuf"),
    "transcript": export_transcript,
    "transcript-requests-only": lambda r: export_transcript(r, evidence=False),
    "transcript-plain": lambda r: export_transcript(r, requests=False),
}
