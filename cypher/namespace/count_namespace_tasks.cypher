// name: count_namespace_tasks
// mode: read
// params: namespace, live_prefix
// How many live tasks (conversations) declare this memory namespace.
MATCH (t:Task {memory_namespace: $namespace})
WHERE t.task_key STARTS WITH $live_prefix
RETURN count(t) AS tasks
