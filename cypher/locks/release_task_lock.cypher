// name: release_task_lock
// mode: write
// params: task_key, owner
// Give the task lock back, only if we hold it.
MATCH (l:TaskLock {task_key: $task_key})
WITH l
WHERE l.holder = $owner
SET l.holder = null, l.holder_pid = null, l.holder_host = null, l.holder_at = null,
    l.purpose = null, l.lock_probe = null
RETURN count(l) AS released
