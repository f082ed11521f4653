// generated from cypher/browser/label_latest_run.cypher by `python -m provrepair.provenance.store.queries --browser browser/queries`: edit that file
// name: label_latest_run
// mode: write
// params: task_id, finished_statuses
// Neo4j Browser styles nodes by label only, and a run's dispositions are relationships from
// its :RepairRun. This materialises the dispositions of the task's latest finished run as
// labels (:Faulty, :Quarantined, :Affected, :Supported, :Invalidated, :Replayed,
// :Suspicious, :Preserved, plus :Seed and :AnswerRelevant, which browser/provrepair.grass
// does not colour), and :Regenerated on the nodes a repair wrote. Stale labels of an
// earlier run are removed first, in the same statement. `provrepair export` runs it on the
// target; by hand: `:param task_id => 'shopping_task_014'`, then this query.
// Returns the run whose marks were applied (null when the task has no finished run).
MATCH (t:Task)
WHERE t.task_id = $task_id AND t.task_key STARTS WITH '~'
MATCH (n:Node {task_key: t.task_key})
REMOVE n:Faulty:Seed:Affected:Supported:Quarantined:Invalidated:AnswerRelevant:Replayed:Preserved:Suspicious:Regenerated
WITH t, count(n) AS nodes
OPTIONAL MATCH (r:RepairRun {task_key: t.task_key})
WHERE r.status IN $finished_statuses
WITH t, nodes, r
ORDER BY r.created DESC, r.run_id DESC
LIMIT 1
OPTIONAL MATCH (r)-[m]->(v:Node)
FOREACH (_ IN CASE WHEN type(m) = 'FAULTY' THEN [1] ELSE [] END | SET v:Faulty)
FOREACH (_ IN CASE WHEN type(m) = 'SEED' THEN [1] ELSE [] END | SET v:Seed)
FOREACH (_ IN CASE WHEN type(m) = 'AFFECTED' THEN [1] ELSE [] END | SET v:Affected)
FOREACH (_ IN CASE WHEN type(m) = 'SUPPORTED' THEN [1] ELSE [] END | SET v:Supported)
FOREACH (_ IN CASE WHEN type(m) = 'QUARANTINED' THEN [1] ELSE [] END | SET v:Quarantined)
FOREACH (_ IN CASE WHEN type(m) = 'INVALIDATED' THEN [1] ELSE [] END | SET v:Invalidated)
FOREACH (_ IN CASE WHEN type(m) = 'ANSWER_RELEVANT' THEN [1] ELSE [] END | SET v:AnswerRelevant)
FOREACH (_ IN CASE WHEN type(m) = 'REPLAY' THEN [1] ELSE [] END | SET v:Replayed)
FOREACH (_ IN CASE WHEN type(m) = 'PRESERVED' THEN [1] ELSE [] END | SET v:Preserved)
FOREACH (_ IN CASE WHEN type(m) = 'SUSPICIOUS' THEN [1] ELSE [] END | SET v:Suspicious)
WITH t, nodes, r, count(m) AS marks
OPTIONAL MATCH (g:Node {task_key: t.task_key})
WHERE (g.origin_run IS NOT NULL AND g.committed = true)
FOREACH (_ IN CASE WHEN g IS NULL THEN [] ELSE [1] END | SET g:Regenerated)
RETURN r.run_id AS run_id, nodes, marks, count(g) AS regenerated
