"""Live capture from an agent instrumented with the OpenTelemetry SDK (the `[otel]` extra).

    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    provider.add_span_processor(BatchSpanProcessor(ProvrepairSpanExporter(open_store())))

The SDK's BatchSpanProcessor calls `export` from its own worker thread, so the agent's thread
only enqueues ended spans. Each export is journaled in the store at once and each agent run is
kept whole, one task per conversation across traces and requests, sub-agents inside their
parent (loaders/otel_runs.py says how, and what happens to spans outside any run). `shutdown()`
stores the runs still open. `OtlpJsonFile` writes the same spans as OTLP/JSON lines for
`provrepair ingest --from otel`, and `memory_span` emits the memory-operation spans for a
memory library without instrumentation.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from provrepair.loaders.otel import ERROR, Span
from provrepair.loaders.otel_runs import (
    DEFAULT_MAX_UNCLAIMED_SPANS,
    DEFAULT_RECOVER_AFTER_S,
    LiveRuns,
)
from provrepair.loaders.otlp_json import attributes_json
from provrepair.provenance.errors import ConfigError, UserError
from provrepair.provenance.store.base import GraphStore

log = logging.getLogger("provrepair.capture")

try:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
    from opentelemetry.trace import StatusCode, Tracer
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ConfigError("live capture needs the otel extra: pip install 'provrepair[otel]'") from exc


def _ids(span: ReadableSpan) -> tuple[str, str]:
    context = span.get_span_context()
    assert context is not None  # an ended SDK span always has one
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def span_of(span: ReadableSpan) -> Span:
    trace_id, span_id = _ids(span)
    return Span(trace_id=trace_id, span_id=span_id,
                start_ns=int(span.start_time or 0), end_ns=span.end_time,
                attributes=dict(span.attributes or {}),
                error=span.status.status_code == StatusCode.ERROR,
                parent_id=format(span.parent.span_id, "016x") if span.parent else None,
                links=tuple(format(link.context.span_id, "016x") for link in span.links),
                link_traces=tuple(format(link.context.trace_id, "032x") for link in span.links),
                error_text=span.status.description or "")


class ProvrepairSpanExporter(SpanExporter):
    """Journals every export and stores each agent run whole (loaders/otel_runs.py); failures
    are kept in `errors` and logged, never raised into the agent. `dropped_spans` counts the
    GenAI spans of traces dropped with nothing to store (loaders/otel_runs.py)."""

    def __init__(self, store: GraphStore, *, max_unclaimed_spans: int = DEFAULT_MAX_UNCLAIMED_SPANS,
                 recover_after_s: float = DEFAULT_RECOVER_AFTER_S):
        self.runs = LiveRuns(store, max_unclaimed_spans=max_unclaimed_spans,
                             recover_after_s=recover_after_s)
        self._errors: list[str] = []
        self._lock = threading.Lock()

    @property
    def stored(self) -> list[str]:
        return self.runs.stored

    @property
    def errors(self) -> list[str]:
        return [*self._errors, *self.runs.errors]

    @property
    def dropped_spans(self) -> int:
        return self.runs.dropped_spans

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            return self._guarded(lambda: self.runs.add([otlp_span(s) for s in spans]))

    def shutdown(self) -> None:
        with self._lock:
            self._guarded(self.runs.finish)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def _guarded(self, work: Callable[[], object]) -> SpanExportResult:
        try:
            work()
        except UserError as exc:
            self._errors.append(f"{type(exc).__name__}: {exc}")
            log.warning("provrepair capture: %s: %s", type(exc).__name__, exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS


class OtlpJsonFile(SpanExporter):
    """Appends each export as one OTLP/JSON object per line (hex ids, nanosecond strings)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(otlp_json(spans), ensure_ascii=False) + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """SDK spans → one OTLP/JSON document, grouped as OTLP groups them: by resource (its
    attributes, `service.name` among them), then by instrumentation scope (name, version)."""
    resources: dict[int, tuple[Any, dict[tuple[str, str], list[dict[str, Any]]]]] = {}
    for span in spans:
        scope = span.instrumentation_scope
        key = (scope.name, scope.version or "") if scope is not None else ("", "")
        resource = span.resource
        entry = resources.setdefault(id(resource), (resource, {}))
        entry[1].setdefault(key, []).append(otlp_span(span))
    return {"resourceSpans": [
        {"resource": {"attributes": attributes_json(dict(resource.attributes or {}))
                      if resource is not None else []},
         "scopeSpans": [{"scope": {"name": name, **({"version": version} if version else {})},
                         "spans": group} for (name, version), group in scopes.items()]}
        for resource, scopes in resources.values()]}


def otlp_span(span: ReadableSpan) -> dict[str, Any]:
    """An SDK span → OTLP/JSON: parent (with the remote flag), links and status message too."""
    trace_id, span_id = _ids(span)
    out: dict[str, Any] = {
        "traceId": trace_id, "spanId": span_id,
        "name": span.name, "startTimeUnixNano": str(span.start_time or 0),
        "endTimeUnixNano": str(span.end_time or 0),
        "attributes": attributes_json(dict(span.attributes or {})),
        "status": {"code": ERROR if span.status.status_code == StatusCode.ERROR else 0}}
    if span.status.description:
        out["status"]["message"] = span.status.description
    if span.parent is not None:
        out["parentSpanId"] = format(span.parent.span_id, "016x")
        out["flags"] = 0x100 | (0x200 if span.parent.is_remote else 0)
    if span.links:
        out["links"] = [{"traceId": format(link.context.trace_id, "032x"),
                         "spanId": format(link.context.span_id, "016x"),
                         "attributes": attributes_json(dict(link.attributes or {}))}
                        for link in span.links]
    return out


@contextmanager
def memory_span(tracer: Tracer, operation: str, *, record_id: str | None = None,
                records: list[dict[str, Any]] | None = None, query: str | None = None,
                conversation_id: str | None = None) -> Iterator[Any]:
    """A GenAI memory-operation span (search_memory, create_memory, update_memory,
    upsert_memory, delete_memory) with the attributes loaders/otel.py reads."""
    with tracer.start_as_current_span(f"{operation} {record_id or ''}".strip()) as span:
        span.set_attribute("gen_ai.operation.name", operation)
        if record_id is not None:
            span.set_attribute("gen_ai.memory.record.id", record_id)
        if records is not None:
            span.set_attribute("gen_ai.memory.records", json.dumps(records, ensure_ascii=False))
        if query is not None:
            span.set_attribute("gen_ai.memory.query.text", query)
        if conversation_id is not None:
            span.set_attribute("gen_ai.conversation.id", conversation_id)
        yield span
