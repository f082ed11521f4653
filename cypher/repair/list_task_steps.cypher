// name: list_task_steps
// mode: read
// params: task_key
// Every step of the task (ids and trace positions, as two parallel lists in one row): the
// plan lists preserved steps explicitly.
MATCH (n:Node {task_key: $task_key})
WITH n
WHERE n.kind = 'step' AND @recorded(n)
RETURN collect(n.id) AS ids, collect(n.position) AS positions
