// name: rollback_repair_run
// mode: write
// params: task_key, run_key, run_id, writing, aborted
// Undo a run that died before its commit: its uncommitted new nodes go, the run is marked
// aborted ($writing, $aborted: provenance/state/runs.py). One statement; idempotent.
MATCH (r:RepairRun {run_key: $run_key})
WITH r
WHERE r.status = $writing
SET r.status = $aborted, r.finished = false
WITH r
OPTIONAL MATCH (n:Node {task_key: $task_key})
WITH r, n
WHERE n.origin_run = $run_id AND coalesce(n.committed, false) = false
DETACH DELETE n
RETURN count(n) AS removed
