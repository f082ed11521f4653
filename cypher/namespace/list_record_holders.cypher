// name: list_record_holders
// mode: read
// params: record_keys, live_prefix
// Every memory node of a live task linked to these records of a shared memory
// (provenance/agent_records.py), with its task's absolute time and whether the task wrote it
// (a PRODUCE edge into it) or read it from the store, and its content (a version is known
// across conversations by its content): the namespace plan (repair/plan/namespace.py) hands
// a version on to every conversation holding a copy of it. Anchored on the
// record's indexed key; nodes of staged copies (being ingested) are left out.
UNWIND $record_keys AS key
MATCH (a:AgentRecord {record_key: key})<-[:OF_RECORD]-(m:Node)
WITH a, m
WHERE m.task_key STARTS WITH $live_prefix
MATCH (t:Task {task_key: m.task_key})
OPTIONAL MATCH (m)<-[p:PRODUCE]-(:Node)
RETURN a.record_key AS record_key, a.record_id AS record_id, t.task_id AS task_id,
       t.started_at AS started_at, t.ended_at AS ended_at, m.id AS id, m.ts AS ts, m.position AS position,
       m.status AS status, m.content AS content, count(p) > 0 AS produced
