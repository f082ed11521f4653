// name: create_eval_task_index
// mode: write
// params:
// In the vault graph: ingest prunes a task's older evaluation records by task_key.
CREATE INDEX FOR (e:EvalRecord) ON (e.task_key)
