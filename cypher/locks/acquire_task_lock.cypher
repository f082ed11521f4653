// name: acquire_task_lock
// mode: write
// params: task_key, owner, pid, host, now, purpose, stale_owner
// Take the lock on a task's writes (repair, ingest of a new version, delete) unless another
// owner holds it, or it is the stale lock of a dead process named by $stale_owner. The lock
// is its own :TaskLock node, so it survives ingest's swap of the task record. The first SET
// takes the node's write lock on Neo4j before the check, so two callers cannot both pass;
// FalkorDB runs one write statement at a time. Returns the holder afterwards: ours if taken.
MERGE (l:TaskLock {task_key: $task_key})
SET l.lock_probe = $owner
WITH l
WHERE coalesce(l.holder, '') = '' OR l.holder = $stale_owner OR l.holder = $owner
SET l.holder = $owner, l.holder_pid = $pid, l.holder_host = $host, l.holder_at = $now,
    l.purpose = $purpose
RETURN l.holder AS holder
