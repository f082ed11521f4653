// name: create_capture_span_index
// mode: write
// params:
CREATE INDEX FOR (c:CaptureSpan) ON (c.span_key, c.trace_id, c.task_key)
