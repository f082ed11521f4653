// name: backfill_run_finished
// mode: write
// params: finished_statuses
// Runs written before runs carried `finished` (provenance/state/runs.py) get it from
// their status, once; run by ensure_schema, a no-op afterwards.
MATCH (r:RepairRun)
WITH r
WHERE r.finished IS NULL
SET r.finished = r.status IN $finished_statuses
RETURN count(r) AS backfilled
