// name: repair_before_after
// mode: read
// params: task_id, repair_statuses
// Before and after the task's latest committed repair (repaired, partial or needs_human:
// $repair_statuses, provenance/state/runs.py): each old step ← REPLAYS — the step that
// replaced it, with the memories each of them produced (old records and regenerated ones).
MATCH (t:Task)
WHERE t.task_id = $task_id AND t.task_key STARTS WITH '~'
MATCH (r:RepairRun {task_key: t.task_key})
WHERE r.status IN $repair_statuses
WITH t, r
ORDER BY r.created DESC, r.run_id DESC
LIMIT 1
MATCH (new:Node {task_key: t.task_key})
WHERE @written_by(new, r.run_id)
MATCH (new)-[x:REPLAYS]->(old:Node)
OPTIONAL MATCH (old)-[po:PRODUCE]->(om:Node)
OPTIONAL MATCH (new)-[pn:PRODUCE]->(nm:Node)
RETURN old, x, new, po, om, pn, nm
