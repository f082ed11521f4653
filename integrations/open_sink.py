"""The sink for what the agent gave a recording wrapper (integrations/sink.py): its
`Recorder`, or its OpenTelemetry tracer, provider or exporter; anything else is refused."""

from __future__ import annotations

from typing import Any

from provrepair.integrations.recorded import RecorderSink
from provrepair.integrations.sink import MemorySink
from provrepair.provenance.errors import ConfigError
from provrepair.provenance.recorder import Recorder


def open_sink(sink: Any, *, conversation_id: str | None = None) -> MemorySink:
    """The sink for `sink` (integrations/sink.py, module docstring)."""
    if isinstance(sink, Recorder):
        if conversation_id is not None and conversation_id != sink.task_id:
            raise ConfigError(f"conversation_id {conversation_id!r}: the Recorder records task "
                              f"{sink.task_id!r} (its task is the conversation)")
        return RecorderSink(sink)
    from provrepair.integrations.spans import MemorySpans  # the otel extra, only here

    return MemorySpans(sink, conversation_id=conversation_id)
