"""Where the recording wrappers send a memory operation: an OpenTelemetry GenAI memory span,
with exactly the attributes loaders/otel.py reads (emitted by loaders/otel_live.py
`memory_span`), plus `gen_ai.memory.store.id`, the agent memory (a task's
`memory_namespace`).

Attached to the conversation in one of two ways:
- **the OTel context** (the default): the span is a child of the current span, so inside the
  agent's `invoke_agent` span it is part of that run, whatever tracer provider made it;
- **an explicit conversation** (`conversation_id=`): the span carries
  `gen_ai.conversation.id`; outside any span, the operation is wrapped in an `invoke_agent`
  span of that conversation, a request that extends the conversation's task (a live capture
  keeps only spans inside an agent run).

`sink` is the agent's `Tracer` or `TracerProvider` (None: the global provider's), or a
`SpanExporter` (`ProvrepairSpanExporter(open_store())`): the wrapper then makes its own
provider exporting each span as it ends, and needs `conversation_id` (integrations/sink.py
chooses this sink, or provrepair's Recorder). A write inside `evidence(ids)` carries them as
`provrepair.evidence_ids`.

Spans are emitted when the operation has returned (its results are what a search span
carries) or failed (status ERROR with the exception: a failed write is recorded as failed).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from provrepair.integrations.sink import MemorySink
from provrepair.provenance.errors import ConfigError

try:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
    from opentelemetry.trace import Status, StatusCode, Tracer
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ConfigError("recording to OpenTelemetry needs the otel extra: pip install "
                      "'provrepair[otel]' (or record with provrepair's Recorder)") from exc

from provrepair.loaders.otel_live import memory_span  # after the extra is checked

SCOPE = "provrepair.integrations"
STORE_ID = "gen_ai.memory.store.id"
EVIDENCE = "provrepair.evidence_ids"


class MemorySpans(MemorySink):
    """One memory operation → one span (module docstring)."""

    def __init__(self, sink: Any = None, *, conversation_id: str | None = None):
        super().__init__()
        if conversation_id == "":
            raise ConfigError("conversation_id is empty: name the conversation, or give None "
                              "(the OTel context's)")
        self.conversation_id = conversation_id
        self._provider: TracerProvider | None = None
        if isinstance(sink, SpanExporter):
            if conversation_id is None:
                raise ConfigError("recording to an exporter needs conversation_id= (without "
                                  "the agent's tracer there is no OTel context to join)")
            self._provider = TracerProvider()
            self._provider.add_span_processor(SimpleSpanProcessor(sink))
            sink = self._provider
        if sink is None:
            sink = trace.get_tracer_provider()
        tracer = sink.get_tracer(SCOPE) if hasattr(sink, "get_tracer") else sink
        if not hasattr(tracer, "start_as_current_span"):  # a graph store, a dict…
            raise ConfigError(f"cannot record memory operations to a {type(sink).__name__}: "
                              "give provrepair's Recorder, the agent's OpenTelemetry Tracer or "
                              "TracerProvider, or a SpanExporter (ProvrepairSpanExporter) with "
                              "conversation_id")
        self.tracer: Tracer = tracer

    def search(self, records: list[dict[str, str]], *, query: str | None = None,
               namespace: str | None = None) -> None:
        """A read that returned `records` ([{id, content}], in the order returned)."""
        self.emit("search_memory", records=records, query=query, namespace=namespace)

    def emit(self, operation: str, *, records: list[dict[str, str]] | None = None,
             record_id: str | None = None, query: str | None = None,
             namespace: str | None = None, error: BaseException | None = None) -> None:
        with self._run(), memory_span(self.tracer, operation, record_id=record_id,
                                      records=records, query=query,
                                      conversation_id=self.conversation_id) as span:
            if namespace is not None:
                span.set_attribute(STORE_ID, namespace)
            if self.evidence_ids is not None and operation != "search_memory":
                span.set_attribute(EVIDENCE, list(self.evidence_ids))
            if error is not None:
                span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))

    def close(self) -> None:
        """Shut down the provider made for an exporter (its spans are exported already)."""
        if self._provider is not None:
            self._provider.shutdown()

    def _run(self) -> AbstractContextManager[Any]:
        if self.conversation_id is None or trace.get_current_span().get_span_context().is_valid:
            return nullcontext()
        return self._agent_span(self.conversation_id)

    @contextmanager
    def _agent_span(self, conversation_id: str) -> Iterator[None]:
        with self.tracer.start_as_current_span("invoke_agent") as span:
            span.set_attribute("gen_ai.operation.name", "invoke_agent")
            span.set_attribute("gen_ai.conversation.id", conversation_id)
            yield

