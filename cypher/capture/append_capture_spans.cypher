// name: append_capture_spans
// mode: write
// params: rows
// The live capture's journal (loaders/otel_runs.py): one node per exported GenAI span, its
// OTLP/JSON kept verbatim, written as each export arrives so a crash loses at most the spans
// the SDK had not exported yet. Idempotent on the span key (trace id / span id).
UNWIND $rows AS row
MERGE (c:CaptureSpan {span_key: row.span_key})
SET c += row.props
