// name: release_repair_lock
// mode: write
// params: task_key, run_id
MATCH (t:Task {task_key: $task_key})
WITH t
WHERE t.repair_lock = $run_id
SET t.repair_lock = null, t.repair_lock_pid = null, t.repair_lock_host = null,
    t.repair_lock_at = null, t.lock_probe = null
