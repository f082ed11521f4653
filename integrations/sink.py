"""Where a recording wrapper sends the agent's memory operations: the sink the agent gives it
(integrations/open_sink.py chooses it).

- provrepair's own `Recorder` (provenance/recorder.py): the operations become steps and
  records of the recorder's task, beside the agent's own (integrations/recorded.py);
- an OpenTelemetry `Tracer` or `TracerProvider` (None: the global one), or a `SpanExporter`
  with `conversation_id`: each operation becomes a GenAI memory span (integrations/spans.py,
  the `[otel]` extra);
- anything else is refused with one line (ConfigError).

Both speak `MemorySink`: `search` (a read and what it returned), `emit` (a write), and what
the agent may use around them, whatever the sink:
- `evidence(ids)`: the writes made inside the block depend on exactly those ids (records,
  steps, inputs the agent recorded; a span's `provrepair.evidence_ids`), not on the
  conservative default (README, "Dependencies: the context window");
- `last_step_id`: the step of the latest operation, for the agent's later steps to cite
  (a Recorder's sink; None over OpenTelemetry, whose steps are named when a run is read).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager


class MemorySink:
    """One memory operation at a time, recorded (module docstring)."""

    def __init__(self) -> None:
        self.evidence_ids: tuple[str, ...] | None = None
        self.last_step_id: str | None = None
        self.last_memory_ids: list[str] = []

    def search(self, records: list[dict[str, str]], *, query: str | None = None,
               namespace: str | None = None) -> None:
        """A read that returned `records` ([{id, content}], in the order returned)."""
        raise NotImplementedError

    def emit(self, operation: str, *, records: list[dict[str, str]] | None = None,
             record_id: str | None = None, query: str | None = None,
             namespace: str | None = None, error: BaseException | None = None) -> None:
        """A write (`create_memory`, `update_memory`, `upsert_memory`: `records`;
        `delete_memory`: `record_id`), failed when `error` is given."""
        raise NotImplementedError

    def check_namespace(self, namespace: str | None) -> None:
        """Before an operation on the agent memory `namespace`: raise if it cannot be
        recorded there (a Recorder's task has one namespace)."""

    def close(self) -> None:
        """Release what the sink made for itself."""

    @contextmanager
    def evidence(self, ids: Iterable[str]) -> Iterator[None]:
        """The writes made inside the block depend on exactly `ids` (module docstring)."""
        outer, self.evidence_ids = self.evidence_ids, tuple(ids)
        try:
            yield
        finally:
            self.evidence_ids = outer


class Recording:
    """What a recording wrapper offers the agent beside the store's own methods."""

    sink: MemorySink

    @property
    def last_step_id(self) -> str | None:
        """The step of the latest operation recorded (None over OpenTelemetry)."""
        return self.sink.last_step_id

    @property
    def last_memory_ids(self) -> list[str]:
        """The record versions the latest operation read or wrote (with a Recorder)."""
        return self.sink.last_memory_ids

    def evidence(self, ids: Iterable[str]) -> AbstractContextManager[None]:
        """The writes made inside the block depend on exactly `ids` (module docstring)."""
        return self.sink.evidence(ids)
