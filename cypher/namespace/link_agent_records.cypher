// name: link_agent_records
// mode: write
// params: task_key, started_at, ended_at, rows
// One record of a shared agent memory across conversations (provenance/agent_records.py):
// each memory node of the task ($rows: uid, record_key, namespace, record_id) gets an
// OF_RECORD edge to its record's :AgentRecord, and the task its absolute times: the earliest
// timestamp of its inputs and steps (kept when smaller: a live recording links as it goes)
// and the latest (kept when larger; the namespace plan bounds which versions a copy it
// cannot tell apart may be by it).
// Idempotent (MERGE), one statement; a node not stored (yet) is skipped.
MATCH (t:Task {task_key: $task_key})
SET t.started_at = CASE WHEN t.started_at IS NULL OR $started_at < t.started_at
                        THEN $started_at ELSE t.started_at END,
    t.ended_at = CASE WHEN t.ended_at IS NULL OR $ended_at > t.ended_at
                      THEN $ended_at ELSE t.ended_at END
WITH DISTINCT t
UNWIND $rows AS row
MATCH (m:Node {uid: row.uid})
MERGE (a:AgentRecord {record_key: row.record_key})
ON CREATE SET a.namespace = row.namespace, a.record_id = row.record_id
MERGE (m)-[:OF_RECORD]->(a)
RETURN count(m) AS linked
