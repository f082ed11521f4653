// name: list_tasks
// mode: read
// params: live_prefix
// Every task with its memory namespace (null: none) and node counts; staging copies of an ingest in progress are hidden.
// Counts are of the recorded task; nodes committed repairs wrote are counted apart
// (repair_nodes), and those of a repair that died before committing (pending_nodes, never
// visible; `provrepair repair` or `delete --prune` removes them) apart again.
MATCH (t:Task)
WHERE t.task_key STARTS WITH $live_prefix
OPTIONAL MATCH (n:Node {task_key: t.task_key})
WITH t, n, @recorded(n) AS recorded
RETURN t.task_id AS task_id, t.domain AS domain, t.complete AS complete,
       t.memory_namespace AS memory_namespace,
       coalesce(t.warnings, []) AS warnings,
       count(CASE WHEN recorded AND n.kind = 'user_input' THEN 1 END) AS user_inputs,
       count(CASE WHEN recorded AND n.kind = 'memory' THEN 1 END) AS memories,
       count(CASE WHEN recorded AND n.kind = 'step' THEN 1 END) AS steps,
       count(CASE WHEN @committed_repair_written(n) THEN 1 END) AS repair_nodes,
       count(CASE WHEN @pending(n) THEN 1 END)
         AS pending_nodes
ORDER BY task_id
