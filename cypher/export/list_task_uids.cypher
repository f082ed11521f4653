// name: list_task_uids
// mode: read
// params: task_key
// The uids of a task's nodes (what an export target holds, to prune what the source lost).
MATCH (n:Node {task_key: $task_key})
RETURN n.uid AS uid
