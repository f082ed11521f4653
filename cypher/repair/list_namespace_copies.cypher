// name: list_namespace_copies
// mode: read
// params: task_key, namespace, fault_uids, active, live_prefix
// The echo sweep over a memory namespace (repair/plan/scope.py): memories of every OTHER
// live task declaring $namespace, $active now, that assert a diagnosed fault's value — the
// same rule as list_value_copies (same entity, key and value; or, for a fault with no
// structured fact, its whole content inside theirs). One row per (record, fault). Whether a
// record is visible (recorded, or written by a committed repair) is decided on origin_run
// and committed by provenance/state/memory.py (visible_now). same_record: the record has the
// fault's agent id (docs/case-format.md, "Agent ids"): in a shared memory it is the fault
// itself as that task recorded it, not a copy.
UNWIND $fault_uids AS fault_uid
MATCH (f:Node {uid: fault_uid})
MATCH (t:Task {memory_namespace: $namespace})
WHERE t.task_key STARTS WITH $live_prefix AND t.task_key <> $task_key
MATCH (m:Node {task_key: t.task_key})
WHERE m.kind = 'memory' AND m.status = $active
  AND ((f.fact_value IS NOT NULL AND m.entity_id = f.entity_id AND m.fact_key = f.fact_key
        AND m.fact_value = f.fact_value)
    OR (f.fact_value IS NULL AND size(f.content) > 0 AND m.content CONTAINS f.content))
RETURN t.task_id AS task_id, m.id AS id, f.id AS fault_id, m.status AS status,
       m.origin_run AS origin_run, m.committed AS committed, m.position AS position,
       coalesce(m.record_id, m.id) = coalesce(f.record_id, f.id) AS same_record
ORDER BY task_id, position, fault_id
