// name: delete_capture_trace
// mode: write
// params: trace_id
// Drops the journaled spans of a trace outside any agent run.
MATCH (c:CaptureSpan {trace_id: $trace_id})
WHERE c.task_key IS NULL
DELETE c
RETURN count(*) AS spans
