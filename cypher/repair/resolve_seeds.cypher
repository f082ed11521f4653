// name: resolve_seeds
// mode: read
// params: uids, active
// Seed candidates of each diagnosed fault m (docs/method.md §1), one row each:
//   failed_mutation  a delete/update/consolidate step m -[DELETE|UPDATE|CONSOLIDATE]-> s
//                    while m is still $active (provenance/state/memory.py; the lifecycle
//                    operation did not take effect)
//   producer         the step s -[PRODUCE]-> m
//   self             m itself (always returned: it also proves m exists in the task)
// The order of preference and the earliest-by-ts choice are applied in repair/plan/seeds.py.
UNWIND $uids AS u
MATCH (m:Node {uid: u})-[:DELETE|UPDATE|CONSOLIDATE]->(w:Node)
WITH u, m, w
WHERE m.status = $active
RETURN u AS fault_uid, 'failed_mutation' AS relation,
       w.uid AS uid, w.id AS id, w.task_key AS task_key, w.kind AS kind,
       w.step_type AS step_type, w.status AS status, w.ts AS ts, w.turn AS turn,
       w.position AS position
UNION ALL
UNWIND $uids AS u
MATCH (m:Node {uid: u})<-[:PRODUCE]-(w:Node)
RETURN u AS fault_uid, 'producer' AS relation,
       w.uid AS uid, w.id AS id, w.task_key AS task_key, w.kind AS kind,
       w.step_type AS step_type, w.status AS status, w.ts AS ts, w.turn AS turn,
       w.position AS position
UNION ALL
UNWIND $uids AS u
MATCH (w:Node {uid: u})
RETURN u AS fault_uid, 'self' AS relation,
       w.uid AS uid, w.id AS id, w.task_key AS task_key, w.kind AS kind,
       w.step_type AS step_type, w.status AS status, w.ts AS ts, w.turn AS turn,
       w.position AS position
