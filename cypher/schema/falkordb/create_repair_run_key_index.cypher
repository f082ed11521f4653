// name: create_repair_run_key_index
// mode: write
// params:
CREATE INDEX FOR (r:RepairRun) ON (r.run_key)
