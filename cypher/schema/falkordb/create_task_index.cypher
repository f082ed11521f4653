// name: create_task_index
// mode: write
// params:
CREATE INDEX FOR (t:Task) ON (t.task_key)
