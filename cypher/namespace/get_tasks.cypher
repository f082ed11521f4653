// name: get_tasks
// mode: read
// params: task_keys
// get_task.cypher for many tasks in one statement, one row each, named by its key: the
// namespace plan's lockstep (repair/plan/lockstep.py) answers every conversation's get_task
// of a round with it.
UNWIND $task_keys AS key
MATCH (t:Task {task_key: key})
RETURN key AS task_key, properties(t) AS props
