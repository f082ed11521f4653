// name: create_task_lock_index
// mode: write
// params:
CREATE INDEX FOR (l:TaskLock) ON (l.task_key)
