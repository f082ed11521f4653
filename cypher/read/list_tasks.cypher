// name: list_tasks
// mode: read
// params: live_prefix
// Every task with its node counts; staging copies of an ingest in progress are hidden.
MATCH (t:Task)
WHERE t.task_key STARTS WITH $live_prefix
OPTIONAL MATCH (n:Node {task_key: t.task_key})
RETURN t.task_id AS task_id, t.domain AS domain, t.complete AS complete,
       count(CASE WHEN n.kind = 'user_input' THEN 1 END) AS user_inputs,
       count(CASE WHEN n.kind = 'memory' THEN 1 END) AS memories,
       count(CASE WHEN n.kind = 'step' THEN 1 END) AS steps
ORDER BY task_id
