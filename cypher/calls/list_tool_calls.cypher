// name: list_tool_calls
// mode: read
// params: task_key
// Every call a repair of the task issued or asked a person about, in the order they entered
// the log (`history`, `pending`, and each run reading the log before it issues a call).
MATCH (c:ToolCall {task_key: $task_key})
RETURN properties(c) AS props
ORDER BY c.created, c.call_key
