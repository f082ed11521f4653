// name: list_reached_records
// mode: read
// params: uids, live_prefix
// The records of a shared memory these memory nodes (of one planned conversation) are
// versions of, and every memory node of a live task linked to them, with the columns of
// list_record_holders.cypher: the namespace plan (repair/plan/namespace.py) hands what one
// conversation's plan reached to the next conversation that read the record.
UNWIND $uids AS u
MATCH (:Node {uid: u})-[:OF_RECORD]->(a:AgentRecord)
WITH DISTINCT a
MATCH (a)<-[:OF_RECORD]-(m:Node)
WITH a, m
WHERE m.task_key STARTS WITH $live_prefix
MATCH (t:Task {task_key: m.task_key})
OPTIONAL MATCH (m)<-[p:PRODUCE]-(:Node)
RETURN a.record_key AS record_key, a.record_id AS record_id, t.task_id AS task_id,
       t.started_at AS started_at, t.ended_at AS ended_at, m.id AS id, m.ts AS ts, m.position AS position,
       m.status AS status, m.content AS content, count(p) > 0 AS produced
