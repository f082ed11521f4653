// name: delete_runs
// mode: write
// params: run_keys
// Repair runs of an export target the source no longer has, with their marks. Idempotent.
UNWIND $run_keys AS run_key
MATCH (r:RepairRun {run_key: run_key})
DETACH DELETE r
