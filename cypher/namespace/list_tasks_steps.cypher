// name: list_tasks_steps
// mode: read
// params: task_keys
// list_task_steps.cypher for many tasks in one statement: one row per task with steps (ids
// and trace positions as parallel lists, and its task_key): the namespace plan's lockstep
// (repair/plan/lockstep.py) answers every conversation's statement of a round with it.
UNWIND $task_keys AS key
MATCH (n:Node {task_key: key})
WITH key, n
WHERE n.kind = 'step' AND @recorded(n)
RETURN key AS task_key, collect(n.id) AS ids, collect(n.position) AS positions
