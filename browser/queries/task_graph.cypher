// generated from cypher/browser/task_graph.cypher by `python -m provrepair.provenance.store.queries --browser browser/queries`: edit that file
// name: task_graph
// mode: read
// params: task_id
// The whole recorded graph of a task, with what repairs wrote (Neo4j Browser draws at most
// its "initial node display" setting, 300 by default: raise it for big tasks).
// `:param task_id => 'shopping_task_014'` first.
MATCH (t:Task)
WHERE t.task_id = $task_id AND t.task_key STARTS WITH '~'
MATCH (n:Node {task_key: t.task_key})
OPTIONAL MATCH (n)-[e]->(m:Node)
RETURN n, e, m
