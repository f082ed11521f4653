// name: list_capture_run
// mode: read
// params: task_key, trace_id
// Every journaled span of a run: those already assigned to the task, and those of the trace
// being assigned (read before the assignment is written, so a crash in between keeps them
// unassigned and recoverable).
MATCH (c:CaptureSpan)
WHERE c.task_key = $task_key OR c.trace_id = $trace_id
RETURN c.span_json AS span_json, coalesce(c.recovered, false) AS recovered
ORDER BY c.start_ns, c.span_key
