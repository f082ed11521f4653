// name: get_latest_repair
// mode: read
// params: task_key, repair_statuses
// The newest committed repair of the task version ($repair_statuses:
// provenance/state/runs.py COMMITTED_REPAIR). Recorded plans do not count: `repair` after `plan` still repairs,
// and `repair` after a repair does not repair again.
MATCH (r:RepairRun {task_key: $task_key})
WITH r
WHERE r.status IN $repair_statuses
RETURN properties(r) AS props
ORDER BY r.created DESC, r.run_id DESC
LIMIT 1
