// name: delete_task
// mode: write
// params: task_key
// Removes a task's nodes, edges and task record in one statement (atomic on both engines).
// Used to clear a staging copy left by an interrupted ingest. The live capture's journal of
// the task goes too: a deleted conversation is not brought back by its next trace.
OPTIONAL MATCH (t:Task {task_key: $task_key})
DETACH DELETE t
WITH count(*) AS tasks
OPTIONAL MATCH (run:RepairRun {task_key: $task_key})
DETACH DELETE run
WITH count(*) AS runs
OPTIONAL MATCH (c:CaptureSpan {task_key: $task_key})
DELETE c
WITH count(*) AS journal
OPTIONAL MATCH (n:Node {task_key: $task_key})
DETACH DELETE n
RETURN count(n) AS nodes
