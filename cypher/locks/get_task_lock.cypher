// name: get_task_lock
// mode: read
// params: task_key
// Who holds the task lock (no row, or a null holder, when nobody does).
MATCH (l:TaskLock {task_key: $task_key})
RETURN l.holder AS holder, l.holder_pid AS pid, l.holder_host AS host, l.holder_at AS at,
       l.purpose AS purpose
