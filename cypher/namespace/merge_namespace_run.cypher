// name: merge_namespace_run
// mode: write
// params: run_key, props
// A namespace repair's run (repair/namespace_repair.py): its plan, faults, status and what
// each conversation's repair did. Idempotent on the run key.
MERGE (r:NamespaceRun {run_key: $run_key})
SET r += $props
