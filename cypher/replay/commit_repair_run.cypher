// name: commit_repair_run
// mode: write
// params: run_key, run_id, props, rows, writing
// The commit point of a repair, ONE statement (atomic on both engines): the run becomes
// finished and every status change of the repair applies at once — faulty records deleted,
// affected ones quarantined, superseded ones restored, regenerated ones activated, new steps
// committed. Before it the store reads exactly as before the repair.
// rows: [{uid, status (or null), audit (bool: keep the old status for audit)}]
// status_recorded keeps the status the record had when the task was recorded (set by the
// first run that changes it): the cumulative memory patch is the change from it (repair/patch.py).
// $props carries the final status and `finished: true` (provenance/state/runs.py
// commit_props); only a run still $writing commits.
MATCH (r:RepairRun {run_key: $run_key})
WITH r
WHERE r.status = $writing
SET r += $props
WITH r
UNWIND $rows AS row
MATCH (n:Node {uid: row.uid})
FOREACH (_ IN CASE WHEN row.audit THEN [1] ELSE [] END |
  SET n.status_before = n.status, n.status_run = $run_id,
      n.status_recorded = coalesce(n.status_recorded, n.status))
SET n.status = coalesce(row.status, n.status), @commit(n)
RETURN count(n) AS changed
