// name: list_record_updates
// mode: read
// params: record_keys, labels, live_prefix
// The versions of these records a conversation wrote from a copy of the same record it holds
// (an update: the copy is an input of the version, or of the step that wrote it; $labels: the
// edges that carry content, SUPPORT, CITE, DERIVE, CONSOLIDATE). The namespace plan
// (repair/plan/namespace.py `_origins`) seeds a faulty record at its other written versions:
// written afresh, they start a line of its versions. Asked for the faulty records only; each
// step anchored on the one before (a filter after WITH: FalkorDB starts from the bound node).
UNWIND $record_keys AS key
MATCH (a:AgentRecord {record_key: key})<-[:OF_RECORD]-(m:Node)
WITH a, m
WHERE m.task_key STARTS WITH $live_prefix
MATCH (m)<-[:PRODUCE]-(s:Node)
WITH a, m, s
MATCH (a)<-[:OF_RECORD]-(r:Node)
WITH m, s, r
WHERE r.task_key = m.task_key AND r.uid <> m.uid
MATCH (r)-[e]->(x:Node)
WITH m, s, e, x
WHERE x.uid IN [m.uid, s.uid] AND type(e) IN $labels
RETURN DISTINCT m.task_key AS task_key, m.id AS id
