// name: get_latest_run
// mode: read
// params: task_key
// The newest finished run of a task (provenance/vocab.py RunStatus: runs being written or
// aborted are not finished).
MATCH (r:RepairRun {task_key: $task_key})
WITH r
WHERE r.finished = true
RETURN properties(r) AS props
ORDER BY r.created DESC, r.run_id DESC
LIMIT 1
