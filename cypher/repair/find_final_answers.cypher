// name: find_final_answers
// mode: read
// params: task_key
// The task's final_answer steps (index on FinalAnswer.task_key: cost is their number, not
// the task's size); the planner takes the last by timestamp, ties by trace position.
MATCH (w:FinalAnswer {task_key: $task_key})
WITH w
WHERE @recorded(w)
RETURN w.uid AS uid, w.id AS id, w.task_key AS task_key, w.kind AS kind,
       w.step_type AS step_type, w.status AS status, w.ts AS ts, w.turn AS turn,
       w.position AS position
