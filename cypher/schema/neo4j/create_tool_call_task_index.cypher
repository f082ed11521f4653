// name: create_tool_call_task_index
// mode: write
// params:
CREATE INDEX tool_call_task_key IF NOT EXISTS FOR (c:ToolCall) ON (c.task_key)
