// name: set_task_warnings
// mode: write
// params: task_key, warnings
// What the live capture could not read of a stored run (no message content captured, a
// trace recovered after a crash), on the task record (`provrepair tasks`).
MATCH (t:Task {task_key: $task_key})
SET t.warnings = $warnings
