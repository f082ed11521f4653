// name: prune_evaluations
// mode: write
// params: task_key, keep_key
// Drops evaluation records of other versions of the task (after a swap). Idempotent.
MATCH (e:EvalRecord {task_key: $task_key})
WHERE e.eval_key <> $keep_key
DELETE e
