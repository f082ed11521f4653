// name: merge_task
// mode: write
// params: task_key, props
// The task's own record: task_id, domain, diagnosed faults, tools/world (JSON), content
// hash, completeness. Idempotent on the task key.
MERGE (t:Task {task_key: $task_key})
SET t += $props
