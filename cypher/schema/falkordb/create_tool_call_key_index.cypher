// name: create_tool_call_key_index
// mode: write
// params:
CREATE INDEX FOR (c:ToolCall) ON (c.call_key)
