// name: list_unlinked_namespace_tasks
// mode: read
// params: live_prefix
// Live tasks of a memory namespace without their absolute time: stored before the records
// of a shared memory were linked (provenance/agent_records.py backfill_agent_records).
MATCH (t:Task)
WHERE t.memory_namespace IS NOT NULL AND t.started_at IS NULL
  AND t.task_key STARTS WITH $live_prefix
RETURN t.task_key AS task_key, t.memory_namespace AS namespace
ORDER BY task_key
