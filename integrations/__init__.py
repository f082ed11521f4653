"""Recording an agent's memory operations where they happen: drop-in wrappers around the
memory store the agent already uses, for the `[otel]` extra plus the store's own extra.

    from provrepair import RecordingStore     # LangGraph BaseStore (and langmem): langgraph.py
    from provrepair import RecordingMemory    # mem0 Memory / AsyncMemory: mem0.py

Each operation is recorded as an OpenTelemetry GenAI memory span (`search_memory`,
`upsert_memory`, `create_memory`, `update_memory`, `delete_memory`, with `gen_ai.memory.*`
attributes and the agent memory in `gen_ai.memory.store.id`) on the agent's tracer: inside the
agent's `invoke_agent` span it joins that run's conversation, which
`provrepair.loaders.otel_live.ProvrepairSpanExporter` stores as one task (README, "Recording
your agent"). Each module needs its store's extra; this package imports none of them.
"""
