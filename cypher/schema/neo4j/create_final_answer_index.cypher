// name: create_final_answer_index
// mode: write
// params:
CREATE INDEX final_answer_task_key IF NOT EXISTS FOR (n:FinalAnswer) ON (n.task_key)
