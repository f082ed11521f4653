// generated from cypher/browser/fault_reach.cypher by `python -m provrepair.provenance.store.queries --browser browser/queries`: edit that file
// name: fault_reach
// mode: read
// params: task_id, finished_statuses
// Everything a fault reached, under the task's latest finished run: the diagnosed faulty
// memories, their provenance seeds and the contaminated region A0, with the dependency edges
// between them (CHAIN only orders steps and never propagates, so it is left out).
MATCH (t:Task)
WHERE t.task_id = $task_id AND t.task_key STARTS WITH '~'
MATCH (r:RepairRun {task_key: t.task_key})
WHERE r.status IN $finished_statuses
WITH r
ORDER BY r.created DESC, r.run_id DESC
LIMIT 1
MATCH (r)-[m]->(n:Node)
WHERE type(m) IN ['FAULTY', 'SEED', 'AFFECTED']
WITH collect(DISTINCT n) AS reached
UNWIND reached AS a
OPTIONAL MATCH (a)-[e]->(b:Node)
WHERE b IN reached AND type(e) <> 'CHAIN'
RETURN a, e, b
