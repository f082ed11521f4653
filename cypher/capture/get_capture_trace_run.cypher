// name: get_capture_trace_run
// mode: read
// params: trace_id
// The run (task id) a stored trace joined, from its journaled spans: where a sub-agent's own
// trace goes when its parent's trace was stored by another capture (loaders/otel_runs.py).
MATCH (c:CaptureSpan {trace_id: $trace_id})
WHERE c.task_key IS NOT NULL
WITH c.task_key AS key
LIMIT 1
MATCH (t:Task {task_key: key})
RETURN t.task_id AS task_id
