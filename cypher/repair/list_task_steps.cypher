// name: list_task_steps
// mode: read
// params: task_key
// Every step of the task (id and trace position): the plan lists preserved steps explicitly.
MATCH (n:Node {task_key: $task_key})
WITH n
WHERE n.kind = 'step' AND n.origin_run IS NULL
RETURN n.id AS id, n.position AS position
