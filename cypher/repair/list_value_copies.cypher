// name: list_value_copies
// mode: read
// params: task_key, fault_uids, active
// The echo sweep's candidates (repair/plan/echo.py): every $active memory of the task other
// than the diagnosed faults, with what it states (content and structured fact). Whether one
// asserts a fault's value is decided in Python (repair/plan/values.py: normalised, bounded),
// which Cypher cannot do on both engines; whether it is visible (recorded, or written by a
// committed repair) by provenance/state/memory.py on origin_run and committed.
MATCH (m:Node {task_key: $task_key})
WITH m
WHERE m.kind = 'memory' AND m.status = $active AND NOT m.uid IN $fault_uids
RETURN m.id AS id, m.uid AS uid, m.content AS content, m.entity_id AS entity_id,
       m.fact_key AS fact_key, m.fact_value AS fact_value, m.status AS status,
       m.origin_run AS origin_run, m.committed AS committed, m.position AS position
ORDER BY position, id
