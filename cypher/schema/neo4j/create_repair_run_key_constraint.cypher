// name: create_repair_run_key_constraint
// mode: write
// params:
CREATE CONSTRAINT repair_run_key IF NOT EXISTS FOR (r:RepairRun) REQUIRE r.run_key IS UNIQUE
