// name: swap_staged_task
// mode: write
// params: task_key, staging_key
// The atomic step of ingest (one statement; FalkorDB has no multi-statement transactions):
// only if the staged copy has its task record, drop the old version of the task (with its
// repair runs, which describe a graph that no longer exists) and move the staged copy into
// place by rewriting its keys (uid = key + "/" + encoded id).
// A crash before this statement leaves the old version untouched; after it, the new one.
// `swapped` is 0 when there was no staged copy (aggregates still return one row).
MATCH (st:Task {task_key: $staging_key})
OPTIONAL MATCH (old:Task {task_key: $task_key})
DETACH DELETE old
WITH DISTINCT st
OPTIONAL MATCH (run:RepairRun {task_key: $task_key})
DETACH DELETE run
WITH DISTINCT st
OPTIONAL MATCH (o:Node {task_key: $task_key})
DETACH DELETE o
WITH DISTINCT st
SET st.task_key = $task_key, st.complete = true
WITH st
OPTIONAL MATCH (n:Node {task_key: $staging_key})
SET n.task_key = $task_key, n.uid = $task_key + substring(n.uid, size($staging_key))
RETURN count(DISTINCT st) AS swapped, count(n) AS nodes
