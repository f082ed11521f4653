// name: list_task_nodes
// mode: read
// params: task_key
MATCH (n:Node {task_key: $task_key})
RETURN properties(n) AS props
ORDER BY n.kind, n.position
