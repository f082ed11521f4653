// name: list_task_node_ids
// mode: read
// params: task_key
// Every id stored under the task, nodes written by repair runs included (the case read back
// leaves those out): new record ids are allocated past all of them, so no id is reused.
MATCH (n:Node {task_key: $task_key})
RETURN n.id AS id, n.kind AS kind
