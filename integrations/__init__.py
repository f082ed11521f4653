"""Recording an agent's memory operations where they happen: drop-in wrappers around the
memory store the agent already uses, for the `[otel]` extra plus the store's own extra.

    from provrepair.integrations import RecordingStore     # LangGraph BaseStore (and langmem)
    from provrepair.integrations import RecordingMemory    # mem0 Memory / AsyncMemory

Each operation is recorded as an OpenTelemetry GenAI memory span (`search_memory`,
`upsert_memory`, `create_memory`, `update_memory`, `delete_memory`, with `gen_ai.memory.*`
attributes and the agent memory in `gen_ai.memory.store.id`) on the agent's tracer: inside the
agent's `invoke_agent` span it joins that run's conversation, which
`provrepair.loaders.otel_live.ProvrepairSpanExporter` stores as one task (README, "Recording
your agent"). Names load on first use: importing this package loads neither LangGraph nor mem0.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from provrepair.integrations.langgraph import RecordingStore
    from provrepair.integrations.mem0 import RecordingMemory
    from provrepair.integrations.spans import MemorySpans

_API = {
    "RecordingStore": "provrepair.integrations.langgraph:RecordingStore",
    "RecordingMemory": "provrepair.integrations.mem0:RecordingMemory",
    "MemorySpans": "provrepair.integrations.spans:MemorySpans",
}

__all__ = ["MemorySpans", "RecordingMemory", "RecordingStore"]


def __getattr__(name: str) -> Any:
    target = _API.get(name)
    if target is None:
        raise AttributeError(f"module 'provrepair.integrations' has no attribute {name!r}")
    module, attr = target.split(":")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value
