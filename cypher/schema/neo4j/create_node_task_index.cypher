// name: create_node_task_index
// mode: write
// params:
CREATE INDEX node_task_key IF NOT EXISTS FOR (n:Node) ON (n.task_key)
