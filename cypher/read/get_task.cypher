// name: get_task
// mode: read
// params: task_key
MATCH (t:Task {task_key: $task_key})
RETURN properties(t) AS props
