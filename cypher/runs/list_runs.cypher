// name: list_runs
// mode: read
// params: task_key
// The task's repair runs, oldest first (`provrepair history`).
MATCH (r:RepairRun {task_key: $task_key})
RETURN properties(r) AS props
ORDER BY r.created, r.run_id
