// name: list_unassigned_capture
// mode: read
// params: written_before
// Journaled spans of traces no run took, last written before the given time: what an
// interrupted capture left (recovered when a capture starts).
MATCH (c:CaptureSpan)
WHERE c.task_key IS NULL AND c.written_ns < $written_before
RETURN c.trace_id AS trace_id, c.span_json AS span_json
ORDER BY c.start_ns, c.span_key
