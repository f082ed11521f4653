// name: create_tool_call_task_index
// mode: write
// params:
CREATE INDEX FOR (c:ToolCall) ON (c.task_key)
