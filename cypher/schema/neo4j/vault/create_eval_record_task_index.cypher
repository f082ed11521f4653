// name: create_eval_record_task_index
// mode: write
// params:
// In the vault's own database: ingest prunes a task's older evaluation records by task_key.
CREATE INDEX eval_record_task IF NOT EXISTS FOR (e:EvalRecord) ON (e.task_key)
