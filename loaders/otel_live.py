"""Live capture from an agent instrumented with the OpenTelemetry SDK (the `[otel]` extra).

    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    provider.add_span_processor(BatchSpanProcessor(ProvrepairSpanExporter(open_store())))

The SDK's BatchSpanProcessor calls `export` from its own worker thread, so the agent's thread
only enqueues ended spans. Spans are buffered per agent run (loaders/otel.py); when the run's
`invoke_agent` span ends, the run becomes a case and is stored (replacing an earlier capture
of the same run). A run whose root never ends is stored at `shutdown()`. `OtlpJsonFile`
writes the same spans as OTLP/JSON lines for `provrepair ingest --from otel`, and
`memory_span` emits the memory-operation spans for a memory library without instrumentation.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from provrepair.loaders.otel import ERROR, RunCollector, Span, to_any_value
from provrepair.provenance.errors import ConfigError, UserError
from provrepair.provenance.store.base import GraphStore

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
                start_ns=int(span.start_time or 0), attributes=dict(span.attributes or {}),
                error=span.status.status_code == StatusCode.ERROR,
                parent_id=format(span.parent.span_id, "016x") if span.parent else None,
                links=tuple(format(link.context.span_id, "016x") for link in span.links),
                error_text=span.status.description or "")


class ProvrepairSpanExporter(SpanExporter):
    """Stores each finished agent run as a case (loaders/otel.py RunCollector); failures are
    kept in `errors`, never raised into the agent."""

    def __init__(self, store: GraphStore):
        self.collector = RunCollector(store)
        self.errors: list[str] = []
        self._lock = threading.Lock()

    @property
    def stored(self) -> list[str]:
        return self.collector.stored

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        def collect() -> None:
            for span in spans:
                self.collector.add(span_of(span))

        with self._lock:
            return self._guarded(collect)

    def shutdown(self) -> None:
        with self._lock:
            self._guarded(self.collector.finish)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def _guarded(self, work: Callable[[], object]) -> SpanExportResult:
        try:
            work()
        except UserError as exc:
            self.errors.append(f"{type(exc).__name__}: {exc}")
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
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [
        {"scope": {"name": "provrepair"}, "spans": [_otlp_span(s) for s in spans]}]}]}


def _otlp_span(span: ReadableSpan) -> dict[str, Any]:
    trace_id, span_id = _ids(span)
    out: dict[str, Any] = {
        "traceId": trace_id, "spanId": span_id,
        "name": span.name, "startTimeUnixNano": str(span.start_time or 0),
        "endTimeUnixNano": str(span.end_time or 0),
        "attributes": [{"key": k, "value": to_any_value(v)} for k, v in (span.attributes or {}).items()],
        "status": {"code": ERROR if span.status.status_code == StatusCode.ERROR else 0,
                   "message": span.status.description or ""}}
    if span.links:
        out["links"] = [{"traceId": format(link.context.trace_id, "032x"),
                         "spanId": format(link.context.span_id, "016x")} for link in span.links]
    if span.parent is not None:
        out["parentSpanId"] = format(span.parent.span_id, "016x")
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
