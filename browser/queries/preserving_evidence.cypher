// generated from cypher/browser/preserving_evidence.cypher by `python -m provrepair.provenance.store.queries --browser browser/queries`: edit that file
// name: preserving_evidence
// mode: read
// params: task_id, node_id, finished_statuses
// The evidence that preserved a node (rule 3): its sufficient predecessors, each with whether
// it lies outside the faults and the contaminated region of the latest finished run (only
// such evidence is independent). An action or observation inherits the verdict of the plan
// or action controlling it: ask about that one.
// `:param task_id => 'shopping_task_014'` and `:param node_id => 's_005'` first.
MATCH (t:Task)
WHERE t.task_id = $task_id AND t.task_key STARTS WITH '~'
MATCH (r:RepairRun {task_key: t.task_key})
WHERE r.status IN $finished_statuses
WITH t, r
ORDER BY r.created DESC, r.run_id DESC
LIMIT 1
MATCH (n:Node {task_key: t.task_key})
WHERE n.id = $node_id
MATCH (p:Node)-[e]->(n)
WHERE e.sufficient = true
OPTIONAL MATCH (r)-[pm]->(p)
WITH r, n, e, p, [k IN collect(type(pm)) WHERE k IN ['FAULTY', 'AFFECTED']] AS tainted
OPTIONAL MATCH (r)-[s:SUPPORTED]->(n)
RETURN n, e, p, size(tainted) = 0 AS independent, s IS NOT NULL AS n_supported,
       p.trust_score AS trust_score, p.ts AS evidence_ts, n.ts AS node_ts
