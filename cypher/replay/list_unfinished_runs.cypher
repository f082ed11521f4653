// name: list_unfinished_runs
// mode: read
// params: task_key, writing
// Runs of the task that started writing and never committed (a crashed repair).
MATCH (r:RepairRun {task_key: $task_key})
WITH r
WHERE r.status = $writing
RETURN r.run_id AS run_id, r.run_key AS run_key
