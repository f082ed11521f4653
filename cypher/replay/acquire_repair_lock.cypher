// name: acquire_repair_lock
// mode: write
// params: task_key, run_id, pid, host, now, stale_run
// Take the task's repair lock unless another run holds it (or it is the stale lock of a
// dead process, named by $stale_run). The first SET takes the node's write lock on Neo4j
// before the check, so two concurrent callers cannot both pass; FalkorDB runs one write
// statement at a time. Returns the holder after the statement: ours if acquired.
MATCH (t:Task {task_key: $task_key})
SET t.lock_probe = $run_id
WITH t
WHERE coalesce(t.repair_lock, '') = '' OR t.repair_lock = $stale_run
SET t.repair_lock = $run_id, t.repair_lock_pid = $pid, t.repair_lock_host = $host,
    t.repair_lock_at = $now
RETURN t.repair_lock AS holder
