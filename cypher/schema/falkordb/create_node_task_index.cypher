// name: create_node_task_index
// mode: write
// params:
CREATE INDEX FOR (n:Node) ON (n.task_key)
