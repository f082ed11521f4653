// name: get_latest_run
// mode: read
// params: task_key, finished_statuses
// The newest finished run of a task ($finished_statuses: provenance/state/runs.py; runs
// being written or aborted are not finished).
MATCH (r:RepairRun {task_key: $task_key})
WITH r
WHERE r.status IN $finished_statuses
RETURN properties(r) AS props
ORDER BY r.created DESC, r.run_id DESC
LIMIT 1
