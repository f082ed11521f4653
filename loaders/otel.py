"""OpenTelemetry GenAI spans → cases (`provrepair ingest --from otel`, and the live exporter
in loaders/otel_live.py).

Input: OTLP/JSON (`{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}`, the body of an
OTLP/HTTP JSON export and, one object per line, what file exporters write): hex trace/span
ids, `startTimeUnixNano` as strings (kept exact), attributes as `AnyValue`s. One case per
agent run, grouped as live capture groups them: a trace belongs to the conversation
(`gen_ai.conversation.id`) of its outermost `invoke_agent` span (a sub-agent's own
conversation inside it joins it), else to the first conversation any of its spans carries,
else it is a run of its own; the traces of one conversation are one run. Order is start
time; within a user turn the steps form one CHAIN in that order, which is also the order of
parent and child spans in an agent loop (a child starts after its parent; a sibling after the
child it follows).

Semantic conventions followed: OpenTelemetry GenAI (development status, as of the memory
operations merged in May 2026): `gen_ai.operation.name` (an open set: an operation not known
here is a generic step), `gen_ai.input.messages` / `gen_ai.output.messages` (captured with
content capture on; a JSON string or structured, both encodings the conventions allow),
`gen_ai.tool.call.id` / `.arguments` / `.result`, `gen_ai.tool.name`,
`gen_ai.memory.record.id`, `gen_ai.memory.records` (list of `{id, content, metadata}`;
`metadata.supersedes`, `metadata.derived_from`), `gen_ai.memory.query.text`, span parent and
links (what a memory write stores), status and its message. Ours: `provrepair.evidence_ids`
(explicit dependencies), `provrepair.diagnosed_faults`, `provrepair.domain`,
`provrepair.memory_namespace` (else `gen_ai.memory.store.id`: the case's memory namespace). What each step
depends on is its context window (loaders/agent_run.py).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from provrepair.loaders.agent_run import (
    WARNINGS,
    Context,
    Event,
    MemorySearch,
    MemoryWrite,
    ModelOutput,
    RecordSeen,
    RunBuilder,
    ToolCall,
    ToolResult,
)
from provrepair.loaders.agent_run import value_text as _value_text
from provrepair.loaders.limits import (
    ENCODED_DEPTH,
    check_depth,
    check_id,
    check_time,
    loads,
    short,
)
from provrepair.loaders.otlp_json import value_of
from provrepair.provenance.errors import CaseError, InputError
from provrepair.provenance.models import Case

INFERENCE = {"chat", "text_completion", "generate_content"}
MEMORY_WRITES = {"create_memory": "create", "update_memory": "update",
                 "upsert_memory": "upsert", "delete_memory": "delete"}
# agent and workflow frames (`invoke_workflow`: the GenAI conventions' experimental
# operation), embeddings…: no step of their own; any other operation is a generic step
IGNORED = {"invoke_agent", "invoke_workflow", "create_agent", "embeddings", "retrieval",
           "create_memory_store", "delete_memory_store"}
ERROR = 2  # STATUS_CODE_ERROR
# where a run names its memory namespace, most explicit first (memory_namespace below)
NAMESPACE_ATTRIBUTES = ("provrepair.memory_namespace", "gen_ai.memory.store.id")


@dataclass(frozen=True)
class Span:
    """What the loader needs of a span, from OTLP JSON or from the SDK."""

    trace_id: str
    span_id: str
    start_ns: int
    attributes: dict[str, Any]
    error: bool = False
    parent_id: str | None = None
    links: tuple[str, ...] = ()  # span ids this span links to
    link_traces: tuple[str, ...] = ()  # the trace id of each link ("" when not given)
    error_text: str = ""         # the status description or exception message of a failure
    end_ns: int | None = None

    @property
    def at(self) -> int:
        """When the span's event happened, what the reading orders by: its start, except a
        tool's result, which exists when the tool's span ends (a sub-agent the tool ran
        worked in between, its spans inside the tool's)."""
        if self.operation == "execute_tool" and self.end_ns is not None \
                and self.end_ns >= self.start_ns:
            return self.end_ns
        return self.start_ns

    @property
    def order(self) -> tuple[int, str]:
        """The reading order of spans: (`at`, span id)."""
        return self.at, self.span_id

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
    """The spans of an OTLP/JSON document, each checked (structure, ids, times, nesting)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("resourceSpans"), list):
        raise InputError(f"{where}: not OTLP/JSON traces (no resourceSpans list)")
    spans = []
    for i, resource in enumerate(raw["resourceSpans"]):
        scopes = _listed(resource, "scopeSpans", f"{where}: resourceSpans[{i}]")
        for j, scope in enumerate(scopes):
            at = f"{where}: resourceSpans[{i}].scopeSpans[{j}]"
            spans += [_span(span, at) for span in _listed(scope, "spans", at)]
    return spans


def _listed(parent: Any, key: str, where: str) -> list[Any]:
    """`parent[key]`, a list (absent or null: empty); anything else is not OTLP."""
    if not isinstance(parent, dict):
        raise InputError(f"{where}: not OTLP/JSON traces (expected an object, got "
                         f"{type(parent).__name__})")
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{where}.{key}: not OTLP/JSON traces (expected a list, got "
                         f"{type(value).__name__})")
    return value


def _span(raw: Any, where: str) -> Span:
    if not isinstance(raw, dict):
        raise InputError(f"{where}: a span is an object, got {type(raw).__name__}")
    trace_id, span_id = _hex_id(raw, "traceId", 32, where), _hex_id(raw, "spanId", 16, where)
    at = f"{where}: span {span_id} of trace {trace_id}"
    try:
        status = raw.get("status") or {}
        check_depth(raw.get("attributes"), at, ENCODED_DEPTH)
        parent = raw.get("parentSpanId")
        links = _listed(raw, "links", at)
        return Span(trace_id=trace_id, span_id=span_id,
                    start_ns=check_time(raw["startTimeUnixNano"], f"{at}: startTimeUnixNano"),
                    end_ns=check_time(raw["endTimeUnixNano"], f"{at}: endTimeUnixNano")
                    if raw.get("endTimeUnixNano") not in (None, "", "0", 0) else None,
                    attributes={check_id(None, "attribute key", a["key"], integers=False):
                                value_of(a["value"]) for a in _listed(raw, "attributes", at)},
                    error=status.get("code") in (ERROR, "STATUS_CODE_ERROR"),
                    parent_id=_hex_id(raw, "parentSpanId", 16, at) if parent else None,
                    links=tuple(_hex_id(link, "spanId", 16, f"{at}: link") for link in links),
                    link_traces=tuple(_hex_id(link, "traceId", 32, f"{at}: link")
                                      if link.get("traceId") else "" for link in links),
                    error_text=str(status.get("message") or _exception(raw)))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"{at}: missing or malformed {exc}") from exc
    except CaseError as exc:
        raise InputError(f"{at}: {exc.field}: {exc.problem}") from exc


def _hex_id(raw: Any, key: str, digits: int, where: str) -> str:
    """An OTLP/JSON trace or span id: hex digits, as a string (OTLP's JSON encoding), at most
    `digits` of them (OTLP writes exactly that many; shorter ones, as hand-written traces
    have, are read as they are)."""
    value = raw.get(key) if isinstance(raw, dict) else None
    if not (isinstance(value, str) and 0 < len(value) <= digits
            and all(c in "0123456789abcdefABCDEF" for c in value)):
        raise InputError(f"{where}: {key} {short(repr(value))} is not an OTLP/JSON id "
                         f"(a string of at most {digits} hex digits)")
    return value


def _exception(raw: dict[str, Any]) -> str:
    """The message of the span's `exception` event (how the SDK records a raised error)."""
    for event in raw.get("events") or []:
        for a in event.get("attributes") or []:
            if a.get("key") == "exception.message":
                return str(value_of(a["value"]))
    return ""


def cases_from_spans(spans: Iterable[Span]) -> list[Case]:
    """One case per run (`group_runs`) that has a span making a step: the same rule as live
    capture (loaders/otel_runs.py), LLM calls outside any agent run included (a run of their
    trace), and read the same way (`read_run`)."""
    warnings: dict[str, list[str]] = {}
    runs = group_runs([span for span in spans if span.operation is not None], warnings)
    cases = []
    for key, run in runs.items():
        if not any(makes_step(s.operation) for s in run):
            continue
        case, more, _ = read_run(key, sorted(run, key=lambda s: s.order))
        cases.append(with_warnings(case, [*warnings.get(key, []), *more]))
    if not cases:
        raise InputError("no GenAI spans (gen_ai.operation.name) in the input: no agent run")
    return cases


def makes_step(operation: str | None) -> bool:
    """Whether a span of this operation is read as a step (not an agent's frame, an
    embedding call…)."""
    return operation is not None and operation not in IGNORED


CONTENT = ("gen_ai.input.messages", "gen_ai.output.messages")


def blind_spans(spans: list[Span]) -> list[Span]:
    """Inference spans recorded without message content."""
    return [s for s in spans if s.operation in INFERENCE
            and not any(s.attributes.get(k) for k in CONTENT)]


def read_run(key: str, spans: list[Span]) -> tuple[Case, list[str], RunReading]:
    """One run's spans (in reading order) → its case, the warnings for its task, and the
    reading that gave the case (of the spans read: those left out are in the warnings;
    live capture merges it into a repaired task, loaders/otel_merge.py). A run whose inference
    spans carry no message content (the instrumentations' default) is read without the
    model's text, tool calls or claims, and says so; a tool result whose call that leaves
    unknown is left out, and said so, rather than losing the run. File ingest and live
    capture read runs here, so they agree."""
    warnings = []
    blind = blind_spans(spans)
    if blind:
        inference = sum(1 for s in spans if s.operation in INFERENCE)
        warnings.append(
            f"message content was not captured on {len(blind)} of {inference} inference "
            "span(s) (e.g. span " f"{blind[0].span_id}): those steps are stored without the "
            "model's text, tool calls or claims; turn content capture on "
            "(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) to record them")
    try:
        reading = RunReading(key).read(spans)
        return reading.case(), warnings, reading
    except CaseError:
        if not blind:
            raise
    called = _captured_call_ids(key, spans)
    orphans = [s for s in spans if s.operation == "execute_tool"
               and str(s.attributes.get("gen_ai.tool.call.id")) not in called]
    warnings.append(f"{len(orphans)} tool result(s) whose call was not captured are left "
                    f"out (e.g. span {orphans[0].span_id})" if orphans else
                    "the run could not be read in full")
    reading = RunReading(key).read([s for s in spans if s not in orphans])
    return reading.case(), warnings, reading


def _captured_call_ids(key: str, spans: list[Span]) -> set[str]:
    ids: set[str] = set()
    for span in spans:
        try:
            messages = _json(key, span, "gen_ai.output.messages", [])
        except (CaseError, InputError):
            continue
        ids.update(str(p.get("id")) for m in messages if isinstance(m, dict)
                   for p in m.get("parts", []) if isinstance(p, dict)
                   and p.get("type") == "tool_call")
    return ids


def group_runs(spans: list[Span], warnings: dict[str, list[str]] | None = None
               ) -> dict[str, list[Span]]:
    """Spans → agent runs. A span's run is its trace's conversation (`_trace_conversations`:
    its outermost `invoke_agent` span's, else the first any span of it carries;
    instrumentations such as openai-v2 do not set it on their inference spans), else its
    trace: every span of a trace is in one run, as in live capture.

    A sub-agent in a trace of its own (its `invoke_agent` span links to a span of another
    trace: the parent's call) joins the run of the span it links to, every span of its trace,
    as a sub-agent within one trace does in live capture. When that span is not in the input,
    the sub-agent's trace is a run of its own, and `warnings` (run → texts) says so."""
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    trace_conversation = _trace_conversations(spans, by_id)

    def own(span: Span) -> str:
        return trace_conversation.get(span.trace_id) or f"trace-{span.trace_id}"

    parents = {trace: link for trace, link in
               ((s.trace_id, sub_agent_link(s)) for s in spans) if link is not None}

    def joined(trace: str, seen: frozenset[str] = frozenset()) -> str | None:
        """The run a sub-agent trace joins: its parent's span's (the parent may be one too)."""
        parent = by_id.get(parents[trace])
        if parent is None or parent.trace_id in seen:
            return None
        if parent.trace_id in parents:
            return joined(parent.trace_id, seen | {trace}) or own(parent)
        return own(parent)

    trace_run: dict[str, str | None] = {t: joined(t) for t in parents}
    runs: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        key = trace_run.get(span.trace_id) or own(span)
        runs[key].append(span)
    for trace, run in trace_run.items():
        if run is None and warnings is not None:
            link_trace, link_span = parents[trace]
            for key in {own(s) for s in spans if s.trace_id == trace}:
                warnings.setdefault(key, []).append(
                    f"sub-agent trace {trace} links to span {link_span} of trace {link_trace}, "
                    "which is not in the input: its run is a task of its own")
    return runs


def _trace_conversations(spans: list[Span], by_id: dict[tuple[str, str], Span]
                         ) -> dict[str, str]:
    """Trace → its run's conversation, as live capture keys it (loaders/otel_runs.py
    `OpenTrace`): the one its outermost `invoke_agent` span carries (a sub-agent's own
    conversation nested in it joins the outer run), else the first one any of its spans
    carries. Outermost: no `invoke_agent` span with a conversation above it; of several, the
    one ending last (live capture's rule: parents end after their children)."""
    agents = {(s.trace_id, s.span_id) for s in spans
              if s.operation == "invoke_agent" and s.conversation}

    def nested(span: Span) -> bool:
        seen: set[str] = set()
        parent = span.parent_id
        while parent is not None and parent not in seen:
            seen.add(parent)
            if (span.trace_id, parent) in agents:
                return True
            above = by_id.get((span.trace_id, parent))
            parent = above.parent_id if above is not None else None
        return False

    outermost: dict[str, Span] = {}
    for key in agents:
        span = by_id[key]
        best = outermost.get(span.trace_id)
        if not nested(span) and (best is None or (span.end_ns or span.start_ns, span.span_id)
                                 > (best.end_ns or best.start_ns, best.span_id)):
            outermost[span.trace_id] = span
    conversations = {trace: str(span.conversation) for trace, span in outermost.items()}
    for span in spans:
        if span.conversation:
            conversations.setdefault(span.trace_id, span.conversation)
    return conversations


def sub_agent_link(span: Span) -> tuple[str, str] | None:
    """(trace id, span id) an `invoke_agent` span links to in another trace: the call of the
    parent agent whose sub-agent runs in a trace of its own; None for any other span."""
    if span.operation != "invoke_agent":
        return None
    for trace, linked in zip(span.link_traces, span.links, strict=False):
        if trace and trace != span.trace_id:
            return trace, linked
    return None


def with_warnings(case: Case, warnings: list[str]) -> Case:
    """The case with these warnings added to those its reading gave (world key
    `provrepair.warnings`, as the loaders write theirs): kept with the task and its hash."""
    existing = list(case.world.get(WARNINGS, []))
    merged = existing + [w for w in warnings if w not in existing]
    if not merged:
        return case
    return case.model_copy(update={"world": {**case.world, WARNINGS: merged}})


@dataclass
class RunReading:
    """One run's spans read so far, in order: the reader, the builder, and the run-wide
    attributes (the last span carrying one wins). More spans may follow (live capture)."""

    task_id: str
    reader: SpanReader = field(init=False)
    builder: RunBuilder = field(init=False)
    domain: Any = None
    faults: Any = None
    last: tuple[int, str] = (-1, "")  # the order (Span.order) of the last span read
    # every memory namespace the spans name, by attribute, in order (memory_namespace below)
    namespaces: dict[str, dict[str, None]] = field(default_factory=dict)
    namespace_note: str | None = None

    def __post_init__(self) -> None:
        self.reader = SpanReader(self.task_id)
        self.builder = RunBuilder(self.task_id)

    def read(self, spans: list[Span]) -> RunReading:
        for span in spans:
            self.last = span.order
            self.domain = span.attributes.get("provrepair.domain", self.domain)
            self.faults = span.attributes.get("provrepair.diagnosed_faults", self.faults)
            for key in NAMESPACE_ATTRIBUTES:
                if (value := span.attributes.get(key)) not in (None, ""):
                    self.namespaces.setdefault(key, {})[str(value)] = None
            try:
                for event in self.reader.events(span):
                    self.builder.add(event)
            except CaseError as exc:  # name the span (and trace) the event came from
                raise CaseError(exc.task_id or self.task_id, exc.field, exc.offending_id,
                                f"{exc.problem} (span {span.span_id} of trace "
                                f"{span.trace_id})") from exc
        self.builder.domain = str(self.domain or "agent")
        self._name_namespace()
        return self

    def _name_namespace(self) -> None:
        namespace, others = memory_namespace(self.namespaces)
        self.builder.memory_namespace = namespace
        notes = [n for n in self.builder.notes if n != self.namespace_note]
        self.namespace_note = None
        if others:
            self.namespace_note = (f"spans name more than one memory namespace; the task's is "
                                   f"the first, {namespace!r} (also: {', '.join(others)})")
            notes.append(self.namespace_note)
        self.builder.notes = notes

    def fault_ids(self) -> list[str]:
        faults = self.faults or []
        # the SDK hands sequence attributes over as tuples, OTLP/JSON as lists
        return [str(f) for f in (faults if isinstance(faults, (list, tuple)) else [faults])]

    def case(self) -> Case:
        return self.builder.case(self.fault_ids())


def memory_namespace(named: dict[str, dict[str, None]]) -> tuple[str | None, list[str]]:
    """The agent memory the run used (the case's `memory_namespace`), from the values the
    run's spans name per attribute (in order, RunReading.namespaces): the first span's
    `provrepair.memory_namespace`, else its `gen_ai.memory.store.id` (the GenAI conventions'
    "collection, namespace, or vector index" a memory operation targets); and any other
    values the run's spans name (kept as a warning: one task has one namespace)."""
    for key in NAMESPACE_ATTRIBUTES:
        values = list(named.get(key, {}))
        if values:
            return values[0], values[1:]
    return None, []


@dataclass
class SpanReader:
    """One run's spans → events; remembers tool calls, to pair results that carry no id."""

    task_id: str
    open_calls: dict[str, list[str]] = field(default_factory=dict)  # tool name → call ids
    answered: set[str] = field(default_factory=set)

    def events(self, span: Span) -> list[Event]:
        op, a = span.operation, span.attributes
        if op in IGNORED:
            return []
        if op == "execute_tool":
            return [self._tool_result(span)]
        if op == "search_memory":
            return [MemorySearch(self._records(span), span.start_ns,
                                 str(a.get("gen_ai.memory.query.text", "")), span.span_id)]
        if op in MEMORY_WRITES:
            return self._writes(span, MEMORY_WRITES[op])
        # an inference, or an operation this loader does not know: a generic step (kept,
        # in order, its input and output read the same way)
        output = self._model_output(span, None if op in INFERENCE else op)
        return [output]

    def _tool_result(self, span: Span) -> ToolResult:
        a = span.attributes
        call_id = a.get("gen_ai.tool.call.id")
        if call_id is not None:
            call_id = check_id(self.task_id, "gen_ai.tool.call.id", call_id)
        if call_id is None:  # pair by tool name with the oldest call still unanswered
            name = str(a.get("gen_ai.tool.name", ""))
            waiting = [c for c in self.open_calls.get(name, []) if c not in self.answered]
            if not waiting:
                raise CaseError(self.task_id, "gen_ai.tool.call.id", span.span_id,
                                f"an execute_tool span of tool {name!r} with no call id, and "
                                "no unanswered call of that tool")
            call_id = waiting[0]
        self.answered.add(str(call_id))
        result = a.get("gen_ai.tool.call.result")
        text = "" if result is None else _value_text(result)
        if span.error:
            text = " ".join(t for t in (text, f"error: {span.error_text or 'failed'}") if t)
        return ToolResult(str(call_id), text, span.at, span.error, span.span_id)

    def _records(self, span: Span) -> tuple[RecordSeen, ...]:
        """The records a memory span names, with their lineage (`metadata.derived_from`,
        `metadata.supersedes`: read on a search's results as on a write's records)."""
        records = _json(self.task_id, span, "gen_ai.memory.records", [])
        if not isinstance(records, list) or not all(
                isinstance(r, dict) and r.get("id") is not None for r in records):
            raise CaseError(self.task_id, "gen_ai.memory.records", span.span_id,
                            "expected a list of {id, content}")
        return tuple(RecordSeen(check_id(self.task_id, "gen_ai.memory.records", r["id"]),
                                _value_text(r.get("content", "")),
                                _ids(_metadata(r).get("derived_from"), "metadata.derived_from"),
                                _ids(_metadata(r).get("supersedes"), "metadata.supersedes"))
                     for r in records)

    def _writes(self, span: Span, op: str) -> list[Event]:
        """One memory operation, whatever the number of records the span names: one step."""
        a = span.attributes
        records = self._records(span)
        named = a.get("gen_ai.memory.record.id")
        if not records:
            if named is None:
                raise CaseError(self.task_id, "gen_ai.memory.record.id", span.span_id,
                                f"a {span.operation} span needs it (or gen_ai.memory.records)")
            records = (RecordSeen(check_id(self.task_id, "gen_ai.memory.record.id", named)),)
        refs = tuple(r for r in (span.parent_id, *span.links) if r)
        evidence = _ids(a.get("provrepair.evidence_ids"), "provrepair.evidence_ids")
        return [MemoryWrite(op, records, span.start_ns, failed=span.error, refs=refs,
                            evidence=evidence, source=span.span_id)]

    def _model_output(self, span: Span, operation: str | None) -> ModelOutput:
        messages = _messages(self.task_id, span, "gen_ai.output.messages")
        parts = [p for m in messages or [] for p in m["parts"]]
        text = " ".join(_part_text(p) for p in parts if p.get("type") == "text")
        reasoning = " ".join(_part_text(p) for p in parts if p.get("type") == "reasoning")
        calls = tuple(ToolCall(check_id(self.task_id, "tool_call.id", p["id"]) if p.get("id")
                               else f"{span.span_id}:{i}", str(p.get("name")),
                               _arguments(p.get("arguments"), f"span {span.span_id}: "
                                          f"tool call {i} arguments"))
                      for i, p in enumerate(parts) if p.get("type") == "tool_call")
        for call in calls:
            self.open_calls.setdefault(call.name, []).append(call.call_id)
        inputs = _messages(self.task_id, span, "gen_ai.input.messages")
        evidence = span.attributes.get("provrepair.evidence_ids")
        return ModelOutput(text or ("(tool calls)" if calls else "(no output recorded)"),
                           span.start_ns, calls,
                           _ids(evidence, "provrepair.evidence_ids") if evidence is not None
                           else None,
                           None if inputs is None else input_context(inputs, span.span_id),
                           operation, span.span_id, reasoning)


def input_context(messages: list[dict[str, Any]], span_id: str) -> Context:
    """The items one inference input carries (GenAI input-messages schema: role + parts)."""
    users, outputs, calls, results, records, texts = [], [], [], [], [], []
    for message in messages:
        role = message.get("role")
        text = " ".join(_part_text(p) for p in message["parts"] if p.get("type") == "text")
        texts += [_part_text(p) for p in message["parts"] if p.get("type") == "reasoning"]
        if role == "user" and text:
            users.append(text)
        elif role == "assistant" and text:
            outputs.append(text)
        elif text:
            texts.append(text)
        for i, part in enumerate(message["parts"]):
            kind = part.get("type")
            if kind == "tool_call":
                calls.append(str(part.get("id") or f"{span_id}:{i}"))
            elif kind == "tool_call_response":
                response = _value_text(part.get("response", part.get("result", "")))
                results.append((str(part.get("id")), response))
                texts.append(response)
            if part.get("memory_record_id") is not None:
                records.append(check_id(None, "memory_record_id", part["memory_record_id"]))
    return Context(tuple(users), tuple(outputs), tuple(calls), tuple(results), tuple(records),
                   tuple(texts))


def _messages(task_id: str, span: Span, key: str) -> list[dict[str, Any]] | None:
    """A messages attribute (a JSON string, or structured: both encodings the conventions
    allow), checked for the shape `[{role, parts: [{type, ...}]}]`; None when absent."""
    messages = _json(task_id, span, key, None)
    if messages is None:
        return None
    if isinstance(messages, list) and all(
            isinstance(m, dict) and isinstance(m.get("role"), str)
            and isinstance(m.get("parts"), list) and all(isinstance(p, dict) for p in m["parts"])
            for m in messages):
        return messages
    raise CaseError(task_id, key, span.span_id,
                    "expected GenAI messages [{role, parts: [{type, ...}]}]")


def _part_text(part: dict[str, Any]) -> str:
    return _value_text(part.get("content", ""))


def _metadata(record: dict[str, Any]) -> dict[str, Any]:
    metadata = record.get("metadata")
    if isinstance(metadata, str):
        try:
            metadata = loads(metadata, f"record {short(str(record.get('id')))}: metadata")
        except json.JSONDecodeError:
            return {}
    return metadata if isinstance(metadata, dict) else {}


def _ids(value: Any, what: str = "ids") -> tuple[str, ...]:
    """One id or a list of ids (the SDK hands sequences over as tuples)."""
    if value is None or value == "":
        return ()
    values = value if isinstance(value, (list, tuple)) else [value]
    if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
        raise CaseError(None, what, None, "expected an id or a list of ids")
    return tuple(check_id(None, what, v) for v in values)


def _arguments(raw: Any, where: str) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = loads(raw, where)
        except json.JSONDecodeError:
            return {"arguments": raw}
    if raw is None:
        return {}
    return raw if isinstance(raw, dict) else {"arguments": raw}


def _json(task_id: str, span: Span, key: str, default: Any) -> Any:
    raw = span.attributes.get(key)
    if raw is None:
        return default
    try:
        return loads(raw, f"span {span.span_id}: {key}") if isinstance(raw, str) else raw
    except json.JSONDecodeError as exc:
        raise CaseError(task_id, key, span.span_id, "not JSON") from exc
