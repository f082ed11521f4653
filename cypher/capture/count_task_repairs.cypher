// name: count_task_repairs
// mode: read
// params: task_key
// The repair runs of a task: live capture does not replace a repaired conversation by a full
// re-read of its journal (loaders/otel_runs.py), which would drop the repairs.
OPTIONAL MATCH (r:RepairRun {task_key: $task_key})
RETURN count(r) AS runs
