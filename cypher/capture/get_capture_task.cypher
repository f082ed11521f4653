// name: get_capture_task
// mode: read
// params: task_key
// A captured conversation's task record and its number of repair runs, before live capture
// writes a trace into it (loaders/otel_runs.py): a repaired task is never replaced (the
// trace is merged into it, loaders/otel_merge.py), and a repair's node ids are never given
// to the trace's nodes. No row when the task is not stored.
MATCH (t:Task {task_key: $task_key})
OPTIONAL MATCH (r:RepairRun {task_key: $task_key})
RETURN properties(t) AS props, count(r) AS repairs
