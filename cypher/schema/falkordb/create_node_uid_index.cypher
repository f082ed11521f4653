// name: create_node_uid_index
// mode: write
// params:
// Anchored lookups: uid = len(task_id):task_id:id, unique per task (FalkorDB has no
// composite index, so the key is one property). Running it twice errors; the adapter
// treats "already indexed" as done.
CREATE INDEX FOR (n:Node) ON (n.uid)
