// name: create_capture_span_trace_index
// mode: write
// params:
CREATE INDEX capture_span_trace IF NOT EXISTS FOR (c:CaptureSpan) ON (c.trace_id)
