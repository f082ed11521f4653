// name: list_unassigned_capture
// mode: read
// params: written_before
// Journaled spans of traces no run took and none of whose spans was written since the given
// time: what an interrupted capture left (a trace still being written is alive elsewhere).
MATCH (c:CaptureSpan)
WHERE c.task_key IS NULL
WITH c.trace_id AS trace_id, max(c.written_ns) AS last, collect(c) AS spans
WHERE last < $written_before
UNWIND spans AS c
RETURN trace_id, c.span_json AS span_json
ORDER BY c.start_ns, c.span_key
