// name: list_value_copies
// mode: read
// params: task_key, fault_uids
// Recorded active memories of the task that assert a diagnosed fault's value, one row per
// (record, fault): the same entity, key and value as the fault's fact, or — for a fault with
// no structured fact — the fault's whole content repeated inside theirs. Whether a recorded
// edge reaches the record is decided in repair/echo.py against the plan (its affected region).
UNWIND $fault_uids AS fault_uid
MATCH (f:Node {uid: fault_uid})
MATCH (m:Node {task_key: $task_key})
WHERE m.kind = 'memory' AND m.origin_run IS NULL AND m.status = 'active' AND m.uid <> f.uid
  AND ((f.fact_value IS NOT NULL AND m.entity_id = f.entity_id AND m.fact_key = f.fact_key
        AND m.fact_value = f.fact_value)
    OR (f.fact_value IS NULL AND size(f.content) > 0 AND m.content CONTAINS f.content))
RETURN m.id AS id, f.id AS fault_id, m.position AS position
ORDER BY position, fault_id
