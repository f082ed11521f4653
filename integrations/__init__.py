"""Recording an agent's memory operations where they happen: drop-in wrappers around the
memory store the agent already uses, each needing its store's extra.

    from provrepair import RecordingStore     # LangGraph BaseStore (and langmem): langgraph.py
    from provrepair import RecordingMemory    # mem0 Memory / AsyncMemory: mem0.py

Each operation is recorded to the sink the agent gives the wrapper (sink.py):
- provrepair's `Recorder`: a step of the recorder's task, beside the agent's own steps, with
  ids and timestamps the wrapper allocates around the recorder's (recorded.py);
- the agent's OpenTelemetry tracer (the `[otel]` extra): a GenAI memory span
  (`search_memory`, `upsert_memory`, `create_memory`, `update_memory`, `delete_memory`, with
  `gen_ai.memory.*` attributes and the agent memory in `gen_ai.memory.store.id`): inside the
  agent's `invoke_agent` span it joins that run's conversation, which
  `provrepair.loaders.otel_live.ProvrepairSpanExporter` stores as one task (README,
  "Recording your agent"; spans.py).
This package imports none of the stores' libraries, nor OpenTelemetry unless it is the sink.
"""
