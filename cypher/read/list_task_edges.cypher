// name: list_task_edges
// mode: read
// params: task_key
MATCH (a:Node {task_key: $task_key})-[r]->(b:Node)
RETURN type(r) AS label, a.id AS src, b.id AS dst, r.sufficient AS sufficient
