"""OpenTelemetry GenAI spans → cases (`provrepair ingest --from otel`, and the live exporter
in loaders/otel_live.py).

Input: OTLP/JSON (`{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}`, the body of an
OTLP/HTTP JSON export and, one object per line, what file exporters write): hex trace/span
ids, `startTimeUnixNano` as strings (kept exact), attributes as `AnyValue`s. One case per
agent run: the spans sharing `gen_ai.conversation.id` (spans without one join the conversation
of their trace), else a trace. Order is start time; within a user turn the steps form one
CHAIN in that order, which is also the order of parent and child spans in an agent loop (a
child starts after its parent; a sibling after the child it follows).

Semantic conventions followed: OpenTelemetry GenAI (development status, as of the memory
operations merged in May 2026): `gen_ai.operation.name`, `gen_ai.input.messages` /
`gen_ai.output.messages` (JSON, captured with content capture on), `gen_ai.tool.call.id` /
`.arguments` / `.result`, `gen_ai.memory.record.id`, `gen_ai.memory.records` (JSON list of
`{id, content}`), `gen_ai.memory.query.text`. Ours: `provrepair.evidence_ids` (explicit
dependencies of an inference), `provrepair.diagnosed_faults`, `provrepair.domain`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from provrepair.loaders.agent_run import (
    Event,
    MemorySearch,
    MemoryWrite,
    ModelOutput,
    RunBuilder,
    ToolCall,
    ToolResult,
    UserMessage,
)
from provrepair.provenance.errors import CaseError, InputError
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.models import Case
from provrepair.provenance.store.base import GraphStore

INFERENCE = {"chat", "text_completion", "generate_content"}
MEMORY_WRITES = {"create_memory": "create", "update_memory": "update",
                 "upsert_memory": "upsert", "delete_memory": "delete"}
IGNORED = {"invoke_agent", "create_agent", "embeddings", "retrieval", "create_memory_store",
           "delete_memory_store"}
ERROR = 2  # STATUS_CODE_ERROR


@dataclass(frozen=True)
class Span:
    """What the loader needs of a span, from OTLP JSON or from the SDK."""

    trace_id: str
    span_id: str
    start_ns: int
    attributes: dict[str, Any]
    error: bool = False

    @property
    def operation(self) -> str | None:
        value = self.attributes.get("gen_ai.operation.name")
        return str(value) if value is not None else None

    @property
    def conversation(self) -> str | None:
        value = self.attributes.get("gen_ai.conversation.id")
        return str(value) if value else None


def load_otlp(paths: list[Path]) -> list[Case]:
    # Hook (issue 28, input formats): JSON or protobuf files, OpenInference / OpenLLMetry
    # attributes mapped to GenAI, all as OTLP/JSON documents: loaders/otlp_files.py.
    from provrepair.loaders.otlp_files import otlp_documents

    spans = [span for path in paths for where, raw in otlp_documents(path)
             for span in otlp_spans(raw, where)]
    return cases_from_spans(spans)


def otlp_spans(raw: Any, where: str) -> list[Span]:
    if not isinstance(raw, dict) or not isinstance(raw.get("resourceSpans"), list):
        raise InputError(f"{where}: not OTLP/JSON traces (no resourceSpans list)")
    return [_span(span, where) for resource in raw["resourceSpans"]
            for scope in resource.get("scopeSpans") or [] for span in scope.get("spans") or []]


def _span(raw: dict[str, Any], where: str) -> Span:
    try:
        return Span(trace_id=str(raw["traceId"]), span_id=str(raw["spanId"]),
                    start_ns=int(raw["startTimeUnixNano"]),
                    attributes={a["key"]: any_value(a["value"]) for a in raw.get("attributes", [])},
                    error=(raw.get("status") or {}).get("code") in (ERROR, "STATUS_CODE_ERROR"))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{where}: span {raw.get('spanId', '?')} of trace "
                         f"{raw.get('traceId', '?')}: missing or malformed {exc}") from exc


def any_value(value: dict[str, Any]) -> Any:
    """An OTLP AnyValue → a Python value (intValue arrives as a string in OTLP/JSON)."""
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return {kv["key"]: any_value(kv["value"]) for kv in value["kvlistValue"].get("values", [])}
    return None


def cases_from_spans(spans: Iterable[Span]) -> list[Case]:
    runs = group_runs([span for span in spans if span.operation is not None])
    if not runs:
        raise InputError("no GenAI spans (gen_ai.operation.name) in the input: no agent run")
    return [run_case(key, sorted(run, key=lambda s: (s.start_ns, s.span_id)))
            for key, run in runs.items()]


def group_runs(spans: list[Span]) -> dict[str, list[Span]]:
    """Spans → agent runs. A span's run is its `gen_ai.conversation.id`, else the one another
    span of its trace carries (instrumentations such as openai-v2 do not set it on their
    inference spans, the agent's own spans do), else its trace."""
    trace_conversation: dict[str, str] = {}
    for span in spans:
        if span.conversation:
            trace_conversation.setdefault(span.trace_id, span.conversation)
    runs: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        key = (span.conversation or trace_conversation.get(span.trace_id)
               or f"trace-{span.trace_id}")
        runs[key].append(span)
    return runs


def run_case(task_id: str, spans: list[Span]) -> Case:
    attrs = {k: v for span in spans for k, v in span.attributes.items()}
    builder = RunBuilder(task_id, str(attrs.get("provrepair.domain") or "agent"))
    seen = Seen()
    for span in spans:
        for event in span_events(task_id, span, seen):
            try:
                builder.add(event)
            except CaseError as exc:  # name the span the event came from
                raise CaseError(exc.task_id, exc.field, exc.offending_id,
                                f"{exc.problem} (span {span.span_id})") from exc
    faults = attrs.get("provrepair.diagnosed_faults") or []
    # the SDK hands sequence attributes over as tuples, OTLP/JSON as lists
    return builder.case([str(f) for f in (faults if isinstance(faults, (list, tuple))
                                          else [faults])])


@dataclass
class Seen:
    """What earlier spans of the run already gave: an inference's input repeats the history."""

    users: set[tuple[int, str]] = field(default_factory=set)
    tool_results: set[str] = field(default_factory=set)


def span_events(task_id: str, span: Span, seen: Seen) -> list[Event]:
    op, a = span.operation, span.attributes
    if op in INFERENCE:
        messages = _json(task_id, span, "gen_ai.input.messages", [])
        return [*_new_user_messages(messages, span, seen), *_new_tool_results(messages, span, seen),
                _model_output(task_id, span)]
    if op == "execute_tool":
        call_id = _required(task_id, span, "gen_ai.tool.call.id")
        seen.tool_results.add(call_id)
        return [ToolResult(call_id, str(a.get("gen_ai.tool.call.result", "")), span.start_ns,
                           span.error)]
    if op == "search_memory":
        records = _json(task_id, span, "gen_ai.memory.records", [])
        if not all(isinstance(r, dict) and "id" in r for r in records):
            raise CaseError(task_id, "gen_ai.memory.records", span.span_id,
                            f"expected [{{id, content}}] (trace {span.trace_id})")
        return [MemorySearch(tuple((str(r["id"]), str(r.get("content", ""))) for r in records),
                             span.start_ns, str(a.get("gen_ai.memory.query.text", "")))]
    if op in MEMORY_WRITES:
        records = _json(task_id, span, "gen_ai.memory.records", [])
        content = str(records[0].get("content", "")) if records else ""
        return [MemoryWrite(MEMORY_WRITES[op], _required(task_id, span, "gen_ai.memory.record.id"),
                            content, span.start_ns, failed=span.error)]
    if op in IGNORED:
        return []
    raise CaseError(task_id, "gen_ai.operation.name", span.span_id,
                    f"unknown operation {op!r} (trace {span.trace_id})")


def _new_user_messages(messages: list[Any], span: Span, seen: Seen) -> list[UserMessage]:
    """User messages of the inference's input not seen before."""
    out = []
    for i, message in enumerate(messages):
        if message.get("role") == "user" and (i, _text(message)) not in seen.users:
            seen.users.add((i, _text(message)))
            out.append(UserMessage(_text(message), span.start_ns - 1))
    return out


def _new_tool_results(messages: list[Any], span: Span, seen: Seen) -> list[ToolResult]:
    """Tool results the agent passed back to the model (`tool_call_response` parts) for calls
    no `execute_tool` span recorded: an agent whose tools are not instrumented is still read."""
    out = []
    for message in messages:
        for part in message.get("parts", []):
            call_id = str(part.get("id"))
            if part.get("type") == "tool_call_response" and call_id not in seen.tool_results:
                seen.tool_results.add(call_id)
                out.append(ToolResult(call_id, _response_text(part.get("response")),
                                      span.start_ns - 1))
    return out


def _response_text(response: Any) -> str:
    return response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)


def _model_output(task_id: str, span: Span) -> ModelOutput:
    messages = _json(task_id, span, "gen_ai.output.messages", [])
    parts = [p for m in messages for p in m.get("parts", [])]
    text = " ".join(str(p.get("content", "")) for p in parts if p.get("type") == "text")
    calls = tuple(ToolCall(str(p["id"]), str(p.get("name")), _arguments(p.get("arguments")))
                  for p in parts if p.get("type") == "tool_call")
    evidence = span.attributes.get("provrepair.evidence_ids")
    return ModelOutput(text or "(tool calls)", span.start_ns, calls,
                       tuple(map(str, evidence)) if isinstance(evidence, (list, tuple)) else None)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return {"arguments": raw}
    return raw if isinstance(raw, dict) else {}


def _text(message: dict[str, Any]) -> str:
    return " ".join(str(p.get("content", "")) for p in message.get("parts", [])
                    if p.get("type") == "text")


def _json(task_id: str, span: Span, key: str, default: Any) -> Any:
    raw = span.attributes.get(key)
    if raw is None:
        return default
    try:
        return json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as exc:
        raise CaseError(task_id, key, span.span_id, f"not JSON (trace {span.trace_id})") from exc


def _required(task_id: str, span: Span, key: str) -> str:
    value = span.attributes.get(key)
    if value is None:
        raise CaseError(task_id, key, span.span_id,
                        f"a {span.operation} span needs it (trace {span.trace_id})")
    return str(value)


class RunCollector:
    """Spans as they arrive → one stored case per agent run, when its `invoke_agent` span
    ends (or at `finish`). Shared by the live exporter and `ingest --from otel --follow`."""

    def __init__(self, store: GraphStore):
        self.store = store
        self.pending: dict[str, list[Span]] = defaultdict(list)
        self.stored: list[str] = []

    def add(self, span: Span) -> None:
        if span.operation is None:
            return  # not a GenAI span (HTTP, database…)
        self.pending[span.trace_id].append(span)
        if span.operation == "invoke_agent":
            self._store(self.pending.pop(span.trace_id))

    def finish(self) -> None:
        runs, self.pending = list(self.pending.values()), defaultdict(list)
        for run in runs:
            self._store(run)

    def _store(self, spans: list[Span]) -> None:
        for case in cases_from_spans(spans):
            ingest_case(self.store, case, replace=True)
            self.stored.append(case.task_id)

