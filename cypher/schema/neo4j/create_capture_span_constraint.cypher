// name: create_capture_span_constraint
// mode: write
// params:
CREATE CONSTRAINT capture_span_key IF NOT EXISTS FOR (c:CaptureSpan) REQUIRE c.span_key IS UNIQUE
