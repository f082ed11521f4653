// name: list_staged_tasks
// mode: read
// params: staging_prefix
// Task ids with a staging copy: an ingest in progress, or one that died before its swap.
MATCH (t:Task)
WHERE t.task_key STARTS WITH $staging_prefix
RETURN t.task_id AS task_id
ORDER BY task_id
