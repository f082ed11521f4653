// name: assign_capture_trace
// mode: write
// params: trace_id, task_key, recovered
// A finished trace joins its agent run: its journaled spans now belong to the task.
MATCH (c:CaptureSpan {trace_id: $trace_id})
SET c.task_key = $task_key, c.recovered = $recovered
RETURN count(c) AS spans
