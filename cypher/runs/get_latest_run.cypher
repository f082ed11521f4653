// name: get_latest_run
// mode: read
// params: task_key
// The newest finished run of a task (runs still being written are skipped).
MATCH (r:RepairRun {task_key: $task_key})
WITH r
WHERE r.status <> 'writing'
RETURN properties(r) AS props
ORDER BY r.created DESC, r.run_id DESC
LIMIT 1
