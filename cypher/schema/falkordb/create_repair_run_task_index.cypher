// name: create_repair_run_task_index
// mode: write
// params:
CREATE INDEX FOR (r:RepairRun) ON (r.task_key)
