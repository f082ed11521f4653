// name: list_namespace_copies
// mode: read
// params: task_key, namespace, active, live_prefix
// The echo sweep over a memory namespace (repair/plan/scope.py): the $active memories of
// every OTHER live task declaring $namespace, with what they state (content and structured
// fact), by task then store order. Whether one asserts a diagnosed fault's value is decided
// in Python by the rule of the task-level sweep (repair/plan/echo.py, values.py); whether it
// is visible (recorded, or written by a committed repair) by provenance/state/memory.py
// (visible_now) on origin_run and committed. record_id: the agent's own id of the record
// (docs/case-format.md, "Agent ids"), to tell the fault itself recorded by another task.
MATCH (t:Task {memory_namespace: $namespace})
WHERE t.task_key STARTS WITH $live_prefix AND t.task_key <> $task_key
MATCH (m:Node {task_key: t.task_key})
WITH t, m
WHERE m.kind = 'memory' AND m.status = $active
RETURN t.task_id AS task_id, m.id AS id, m.uid AS uid, m.content AS content,
       m.entity_id AS entity_id, m.fact_key AS fact_key, m.fact_value AS fact_value,
       m.record_id AS record_id, m.status AS status, m.origin_run AS origin_run,
       m.committed AS committed, m.position AS position
ORDER BY task_id, position, id
