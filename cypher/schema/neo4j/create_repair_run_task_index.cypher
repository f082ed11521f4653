// name: create_repair_run_task_index
// mode: write
// params:
CREATE INDEX repair_run_task_key IF NOT EXISTS FOR (r:RepairRun) ON (r.task_key)
