// name: create_capture_span_task_index
// mode: write
// params:
CREATE INDEX capture_span_task IF NOT EXISTS FOR (c:CaptureSpan) ON (c.task_key)
