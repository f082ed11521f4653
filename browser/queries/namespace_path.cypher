// generated from cypher/browser/namespace_path.cypher by `python -m provrepair.provenance.store.queries --browser browser/queries`: edit that file
// name: namespace_path
// mode: read
// params: namespace, finished_statuses
// A fault's path across the conversations of a shared memory (issue 37): every record of
// the namespace that a conversation's latest finished run marked FAULTY or AFFECTED (a
// `plan --namespace` or `repair --namespace` records one per reached conversation), and
// every conversation's node of that record, linked to it by OF_RECORD: each :AgentRecord
// joins the conversation that wrote it to those that read it (nodes carry their task_id).
MATCH (t:Task {memory_namespace: $namespace})
WHERE t.task_key STARTS WITH '~'
MATCH (r:RepairRun {task_key: t.task_key})
WHERE r.status IN $finished_statuses
WITH t, r
ORDER BY r.created DESC, r.run_id DESC
WITH t, collect(r)[0] AS latest
MATCH (latest)-[m]->(n:Memory)
WHERE type(m) IN ['FAULTY', 'AFFECTED']
MATCH (n)-[:OF_RECORD]->(a:AgentRecord)
WITH DISTINCT a
MATCH (h:Memory)-[o:OF_RECORD]->(a)
WHERE h.task_key STARTS WITH '~'
RETURN h, o, a
