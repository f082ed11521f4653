// name: create_tool_call_key_constraint
// mode: write
// params:
CREATE CONSTRAINT tool_call_key IF NOT EXISTS FOR (c:ToolCall) REQUIRE c.call_key IS UNIQUE
