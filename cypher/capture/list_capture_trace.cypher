// name: list_capture_trace
// mode: read
// params: trace_id
// The journaled spans of one ended trace no run took yet: what a later trace of a stored
// conversation adds to it (loaders/otel_extend.py), read without the conversation's other
// spans. Found through the trace_id index.
MATCH (c:CaptureSpan {trace_id: $trace_id})
WHERE c.task_key IS NULL
RETURN c.span_json AS span_json, coalesce(c.recovered, false) AS recovered
ORDER BY c.start_ns, c.span_key
