// name: create_final_answer_index
// mode: write
// params:
CREATE INDEX FOR (n:FinalAnswer) ON (n.task_key)
