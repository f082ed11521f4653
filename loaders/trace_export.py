"""A recorded case (native provenance) → the run as an outside agent would have traced it: an
OTLP trace made with the real OpenTelemetry SDK (the `[otel]` extra; message attributes as
JSON strings, or structured AnyValues: both encodings the GenAI conventions allow) and an
OpenAI-style transcript; `read_back` reads either with the loaders. The check that a read-back
run's plan misses nothing the native plan affects is benchmark/soundness.py
(tests/integration/test_trace_soundness.py, bench/trace_soundness.py).

What each inference was shown (`mode`):
- "history": a chat that re-sends the whole conversation in each request (user turns,
  earlier outputs, tool calls and results), with the records retrieved in the turn in a
  system message by content ("What you remember: ...") and those the step cites without a
  retrieval named by `memory_record_id`;
- "cited": each request carries the turn's user message and exactly what the step used
  natively (its `used_ids`), records as `memory_record_id` parts.

Every native step keeps a key (`origin`) the ingested case's `world["provrepair.sources"]`
names too, so ids map back: a span id, `call <native action id>`, `messages[i]`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from provrepair.loaders.openai_messages import transcript_case
from provrepair.loaders.otel import cases_from_spans, otlp_spans
from provrepair.loaders.otel_live import otlp_json
from provrepair.loaders.otlp_json import any_value_json
from provrepair.loaders.otlp_protobuf import protobuf_documents
from provrepair.provenance.errors import ConfigError
from provrepair.provenance.models import Case, ExecutionStep, UserInput

try:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import (
        SimpleSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )
    from opentelemetry.sdk.trace.id_generator import IdGenerator
    from opentelemetry.trace import Link, Status, StatusCode
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ConfigError("exporting traces needs the otel extra: pip install 'provrepair[otel]'") \
        from exc

MS = 1_000_000  # a native timestamp unit as nanoseconds
INFERENCES = {"claim", "plan", "final_answer"}
WRITES = {"memory_write", "memory_update", "memory_delete", "memory_consolidate"}
STRUCTURED = {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.memory.records"}


class _SequentialIds(IdGenerator):
    """Span ids 1, 2, 3… (the exporter knows which native step each span is)."""

    def __init__(self, trace_id: int):
        self.trace_id, self.next = trace_id, 0

    def generate_span_id(self) -> int:
        self.next += 1
        return self.next

    def generate_trace_id(self) -> int:
        return self.trace_id


class _Keep(SpanExporter):
    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


@dataclass
class Exported:
    """One export: the document(s) and native id → origin key."""

    payload: Any
    origin: dict[str, str] = field(default_factory=dict)


@dataclass
class _Run:
    """What the agent has said and seen so far (shared by both exports)."""

    case: Case
    mode: str
    steps: dict[str, ExecutionStep] = field(init=False)
    conversation: list[dict[str, Any]] = field(default_factory=list)  # GenAI messages
    users_sent: set[str] = field(default_factory=set)
    turn_records: list[str] = field(default_factory=list)
    turn: int = 0

    def __post_init__(self) -> None:
        self.steps = {s.step_id: s for s in self.case.trace}
        self.records = {m.memory_id: m for m in self.case.memory_store}

    def issued_by(self) -> dict[str, list[str]]:
        """Output step → the actions it issues in its own reply (an action that also used
        something else is issued by a request of its own, which saw that)."""
        out: dict[str, list[str]] = {}
        for s in self.case.trace:
            if s.step_type == "tool_action":
                plans = [u for u in s.used_ids if u in self.steps
                         and self.steps[u].step_type in INFERENCES]
                if len(plans) == len(s.used_ids) == 1:
                    out.setdefault(plans[0], []).append(s.step_id)
        return out

    def new_turn(self, step: ExecutionStep) -> None:
        if step.turn != self.turn:
            self.turn, self.turn_records = step.turn, []

    def user_messages(self, ts: int) -> list[dict[str, Any]]:
        return [_message("user", u.content) for u in self.new_users(ts)]

    def new_users(self, ts: int) -> list[UserInput]:
        """User turns said by now and not yet in the conversation."""
        out = [u for u in self.case.session
               if u.timestamp <= ts and u.input_id not in self.users_sent]
        self.users_sent.update(u.input_id for u in out)
        return out

    def input_messages(self, step: ExecutionStep) -> list[dict[str, Any]]:
        self.conversation += self.user_messages(step.timestamp)
        cited_records = self.cited_records(step)
        if self.mode == "history":
            # retrieved in the turn: shown by content; cited without a retrieval (a profile
            # the agent always has): named by id
            notes = "\n".join(f"- {self.records[m].content}" for m in self.turn_records)
            parts = [{"type": "text", "content": f"What you remember:\n{notes}"}] if notes else []
            parts += [{"type": "text", "content": self.records[m].content, "memory_record_id": m}
                      for m in cited_records if m not in self.turn_records]
            system = [{"role": "system", "parts": parts}] if parts else []
            return [*system, *self.conversation]
        return self.cited_messages(step, cited_records)

    def cited_records(self, step: ExecutionStep) -> list[str]:
        """Records the step used, and those written by a memory step it cites (the agent
        showed the model what it saved)."""
        written = [m for u in step.used_ids if u in self.steps
                   and self.steps[u].step_type in WRITES
                   for m in self.steps[u].generated_memory_ids]
        return list(dict.fromkeys([*(u for u in step.used_ids if u in self.records), *written]))

    def cited_messages(self, step: ExecutionStep, records: list[str]) -> list[dict[str, Any]]:
        parts = [{"type": "text", "content": self.records[m].content, "memory_record_id": m}
                 for m in records]
        out = [{"role": "system", "parts": parts}] if parts else []
        turn_user = [u for u in self.case.session if u.turn == step.turn]
        cited = sorted({*[u.input_id for u in turn_user],
                        *(i for i in step.used_ids if i not in self.records)},
                       key=lambda i: self._ts(i))
        inputs = {u.input_id: u for u in self.case.session}
        for item in cited:
            if item in inputs:
                out.append(_message("user", inputs[item].content))
            elif item in self.steps:
                out += self._step_messages(self.steps[item])
        return out

    def _step_messages(self, s: ExecutionStep) -> list[dict[str, Any]]:
        if s.step_type in INFERENCES:
            return [_message("assistant", s.content)]
        if s.step_type == "tool_observation":
            action = self.steps[_action_of(self, s)]
            return [{"role": "assistant", "parts": [_call_part(action)]},
                    {"role": "tool", "parts": [{"type": "tool_call_response", "id": action.step_id,
                                                "response": s.content}]}]
        if s.step_type == "memory_read":
            return [{"role": "system", "parts": [
                {"type": "text", "content": self.records[m].content, "memory_record_id": m}
                for m in s.used_ids if m in self.records]}]
        return []

    def _ts(self, item: str) -> int:
        if item in self.steps:
            return self.steps[item].timestamp
        return next(u.timestamp for u in self.case.session if u.input_id == item)


def _message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _call_part(action: ExecutionStep) -> dict[str, Any]:
    return {"type": "tool_call", "id": action.step_id, "name": action.tool_name,
            "arguments": action.tool_args or {}}


def _action_of(run: _Run, observation: ExecutionStep) -> str:
    return next(u for u in [*observation.used_ids, *observation.prev_step_ids]
                if u in run.steps and run.steps[u].step_type == "tool_action")


# -- OpenTelemetry -------------------------------------------------------------------------

def export_otel(case: Case, mode: str = "history", structured: bool = False) -> Exported:
    """The run as an OTLP/JSON document made by the SDK; `structured`: messages and records as
    AnyValue lists/maps instead of JSON strings."""
    keep = _Keep()
    provider = TracerProvider(id_generator=_SequentialIds(0xA1 << 64 | len(case.trace)))
    provider.add_span_processor(SimpleSpanProcessor(keep))
    tracer = provider.get_tracer("trace-export")
    run = _Run(case, mode)
    issued = run.issued_by()
    start = min([0, *(u.timestamp for u in case.session)]) * MS
    root = tracer.start_span("invoke_agent", start_time=start, attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": case.task_id,
        "provrepair.domain": case.domain})
    parent = trace.set_span_in_context(root)
    spans: dict[str, Any] = {}
    origin: dict[str, str] = {}

    def span(step: ExecutionStep, name: str, attrs: dict[str, Any],
             links: Sequence[str] = ()) -> Any:
        made = tracer.start_span(name, context=parent, start_time=step.timestamp * MS,
                                 attributes={"gen_ai.conversation.id": case.task_id, **attrs},
                                 links=[Link(spans[x].get_span_context())
                                        for x in links if x in spans])
        if step.status == "error":
            made.set_status(Status(StatusCode.ERROR, "the call failed"))
        made.end(end_time=step.timestamp * MS + 1)
        spans[step.step_id] = made
        origin[step.step_id] = format(made.get_span_context().span_id, "016x")
        return made

    for step in case.trace:
        run.new_turn(step)
        kind = step.step_type.value
        if kind == "memory_read":
            found = [{"id": m, "content": run.records[m].content} for m in step.used_ids
                     if m in run.records]
            run.turn_records += [r["id"] for r in found]
            span(step, "search_memory", {"gen_ai.operation.name": "search_memory",
                                         "gen_ai.memory.records": json.dumps(found)})
        elif kind in INFERENCES or (kind == "tool_action" and step.step_id not in
                                    {a for v in issued.values() for a in v}):
            actions = [run.steps[a] for a in issued.get(step.step_id, [])]
            if kind == "tool_action":
                actions = [step]
            messages = run.input_messages(step)
            parts: list[dict[str, Any]] = (
                [{"type": "text", "content": step.content}] if kind != "tool_action" else [])
            parts += [_call_part(a) for a in actions]
            output = [{"role": "assistant", "parts": parts}]
            span(step, "chat", {"gen_ai.operation.name": "chat",
                                "gen_ai.input.messages": json.dumps(messages),
                                "gen_ai.output.messages": json.dumps(output)})
            run.conversation += output
            for a in actions:
                origin[a.step_id] = f"call {a.step_id}"
            if kind == "tool_action":
                origin.pop(step.step_id)  # the request is ours, the action is the call
                origin[step.step_id] = f"call {step.step_id}"
        elif kind == "tool_observation":
            action = _action_of(run, step)
            span(step, "execute_tool", {"gen_ai.operation.name": "execute_tool",
                                        "gen_ai.tool.call.id": action,
                                        "gen_ai.tool.name": run.steps[action].tool_name or "",
                                        "gen_ai.tool.call.result": step.content})
            run.conversation.append({"role": "tool", "parts": [
                {"type": "tool_call_response", "id": action, "response": step.content}]})
        elif kind in WRITES:
            op, records = _write(run, step)
            span(step, f"{op} memory", {"gen_ai.operation.name": op,
                                        "gen_ai.memory.records": json.dumps(records)},
                 links=[u for u in step.used_ids if u in run.steps])
    root.end(end_time=max([0, *(s.timestamp for s in case.trace)]) * MS + 2)
    provider.shutdown()
    document = otlp_json(keep.spans)
    if structured:
        document = as_structured(document)
    return Exported(document, origin)


def _write(run: _Run, step: ExecutionStep) -> tuple[str, list[dict[str, Any]]]:
    """The memory span of a native mutation: its operation and records (with metadata)."""
    kind = step.step_type.value
    if kind == "memory_delete":
        return "delete_memory", [{"id": m} for m in step.invalidated_memory_ids]
    sources = [u for u in step.used_ids if u in run.records]
    records = []
    for m in step.generated_memory_ids:
        record = run.records[m]
        metadata: dict[str, Any] = {"derived_from": list(dict.fromkeys(
            [*sources, *record.derived_from]))}
        if step.invalidated_memory_ids:
            metadata["supersedes"] = step.invalidated_memory_ids
        records.append({"id": m, "content": record.content, "metadata": metadata})
    if not step.generated_memory_ids:  # recorded, did not take effect (a stale fault)
        records = [{"id": m, "content": step.content, "metadata": {"derived_from": sources}}
                   for m in step.invalidated_memory_ids[:1]]
    return ("create_memory" if kind == "memory_write" else "update_memory"), records


def as_structured(document: dict[str, Any]) -> dict[str, Any]:
    """The messages and records attributes of a document as structured AnyValues (the
    second encoding the GenAI conventions allow) instead of JSON strings."""
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for attribute in span["attributes"]:
                    if attribute["key"] in STRUCTURED:
                        attribute["value"] = any_value_json(
                            json.loads(attribute["value"]["stringValue"]))
    return document


# -- transcript ----------------------------------------------------------------------------

def export_transcript(case: Case, requests: bool = True, evidence: bool = True) -> Exported:
    """The run as an OpenAI-style transcript (a transcript carries the whole conversation:
    there is no "cited" variant); memory operations as `memory_events`. `requests`: with what
    each assistant message's request carried (`requests`, the "history" mode's messages as
    chat messages: what the OTel export's inference spans show); without, the conservative
    reading applies (each message was shown everything before it). `evidence` (with
    `requests`): each memory write names what it stores (the native step's inputs, as the
    OTel export's span links do)."""
    run = _Run(case, "history")
    issued = run.issued_by()
    issued_actions = {a for v in issued.values() for a in v}
    messages: list[dict[str, Any]] = []
    sent: list[dict[str, Any]] = []  # one request per assistant message
    events: list[dict[str, Any]] = []
    origin: dict[str, str] = {}
    shown: set[str] = set()  # records the conversation has had
    users: dict[str, str] = {}  # native user input id → its message
    for step in case.trace:
        run.new_turn(step)
        kind = step.step_type.value
        for u in run.new_users(step.timestamp):
            run.conversation.append(_message("user", u.content))
            messages.append({"role": "user", "content": u.content})
            users[u.input_id] = f"messages[{len(messages) - 1}]"
        if kind == "memory_read":
            shown.update(step.used_ids)
            found = [m for m in step.used_ids if m in run.records]
            run.turn_records += found
            events.append({"after": len(messages) - 1, "op": "search", "records": [
                {"id": m, "content": run.records[m].content} for m in found]})
            origin[step.step_id] = f"memory_events[{len(events) - 1}]"
        elif kind in INFERENCES or (kind == "tool_action" and step.step_id not in issued_actions):
            unseen = [m for m in run.cited_records(step) if m not in shown]
            if unseen and not requests:  # records the step had without a retrieval: loaded
                events.append({"after": len(messages) - 1, "op": "search", "records": [
                    {"id": m, "content": run.records[m].content} for m in unseen]})
                shown.update(unseen)
            if requests:  # (the request names them by `memory_record_id`)
                sent.append({"messages": [chat_message(m) for m in run.input_messages(step)]})
            actions = [step] if kind == "tool_action" else [run.steps[a] for a in
                                                            issued.get(step.step_id, [])]
            message: dict[str, Any] = {"role": "assistant",
                                       "content": step.content if kind != "tool_action" else None}
            if actions:
                message["tool_calls"] = [
                    {"id": a.step_id, "type": "function", "function": {
                        "name": a.tool_name, "arguments": json.dumps(a.tool_args or {})}}
                    for a in actions]
            messages.append(message)
            run.conversation.append({"role": "assistant", "parts": [
                *([_part_text(step.content)] if kind != "tool_action" else []),
                *(_call_part(a) for a in actions)]})
            if kind != "tool_action":
                origin[step.step_id] = f"messages[{len(messages) - 1}]"
            for a in actions:
                origin[a.step_id] = f"call {a.step_id}"
        elif kind == "tool_observation":
            action = _action_of(run, step)
            messages.append({"role": "tool", "tool_call_id": action, "content": step.content})
            run.conversation.append({"role": "tool", "parts": [
                {"type": "tool_call_response", "id": action, "response": step.content}]})
            origin[step.step_id] = f"messages[{len(messages) - 1}]"
        elif kind in WRITES:
            op, records = _write(run, step)
            # what it stores: its inputs as the transcript names them (records go in
            # `derived_from`); one it cannot name leaves the reading to the loader's default
            cites = [users.get(u) or origin[u] for u in step.used_ids
                     if u in users or u in origin]
            if any(u not in users and u not in origin and u not in run.records
                   for u in step.used_ids):
                cites = []
            for record in records:
                events.append({
                    "after": len(messages) - 1, "op": op.removesuffix("_memory"),
                    "id": record["id"], "content": record.get("content", ""),
                    "failed": step.status == "error",
                    "derived_from": record.get("metadata", {}).get("derived_from", []),
                    "supersedes": record.get("metadata", {}).get("supersedes", []),
                    **({"evidence": cites} if requests and evidence and cites else {})})
            origin[step.step_id] = f"memory_events[{len(events) - len(records)}]"
    transcript = {"task_id": case.task_id, "domain": case.domain, "messages": messages,
                  "memory_events": events}
    return Exported({**transcript, "requests": sent} if requests else transcript, origin)


def _part_text(text: str) -> dict[str, Any]:
    return {"type": "text", "content": text}


def chat_message(message: dict[str, Any]) -> dict[str, Any]:
    """A GenAI message (role + parts) as the chat-completions API sends it."""
    parts = message["parts"]
    if message["role"] == "tool":
        (response,) = parts
        return {"role": "tool", "tool_call_id": response["id"], "content": response["response"]}
    texts = [{"type": "text", "text": p["content"],
              **({"memory_record_id": p["memory_record_id"]} if "memory_record_id" in p else {})}
             for p in parts if p["type"] == "text"]
    out: dict[str, Any] = {"role": message["role"], "content": texts or None}
    calls = [{"id": p["id"], "type": "function", "function": {
        "name": p["name"], "arguments": json.dumps(p["arguments"])}}
        for p in parts if p["type"] == "tool_call"]
    if calls:
        out["tool_calls"] = calls
    return out


EXPORTS: dict[str, Callable[[Case], Exported]] = {
    "otel-json-history": lambda c: export_otel(c, "history"),
    "otel-structured-history": lambda c: export_otel(c, "history", structured=True),
    "otel-json-cited": lambda c: export_otel(c, "cited"),
    "otel-structured-cited": lambda c: export_otel(c, "cited", structured=True),
    "transcript": export_transcript,
    "transcript-requests-only": lambda c: export_transcript(c, evidence=False),
    "transcript-conservative": lambda c: export_transcript(c, requests=False),
}


def read_back(name: str, exported: Exported, task_id: str) -> Case:
    """An export read by the loader of its format (`name` as in EXPORTS, or an export of
    the shape corpus: benchmark/shape_export.py): a transcript, OTLP/JSON, or protobuf
    bytes."""
    if name.startswith("transcript"):
        return transcript_case(exported.payload, task_id)
    documents = ([doc for _, doc in protobuf_documents(exported.payload, name)]
                 if isinstance(exported.payload, bytes) else [exported.payload])
    (case,) = cases_from_spans([s for doc in documents for s in otlp_spans(doc, name)])
    return case
