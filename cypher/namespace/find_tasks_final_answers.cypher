// name: find_tasks_final_answers
// mode: read
// params: task_keys
// find_final_answers.cypher for many tasks in one statement (rows carry their task_key):
// the namespace plan's lockstep (repair/plan/lockstep.py) answers every conversation's
// statement of a round with it.
UNWIND $task_keys AS key
MATCH (w:FinalAnswer {task_key: key})
WITH w
WHERE @recorded(w)
RETURN w.uid AS uid, w.id AS id, w.task_key AS task_key, w.kind AS kind,
       w.step_type AS step_type, w.status AS status, w.ts AS ts, w.turn AS turn,
       w.position AS position
