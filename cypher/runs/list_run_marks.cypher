// name: list_run_marks
// mode: read
// params: run_key
// Every node a run marked, with the mark (the relationship type).
MATCH (r:RepairRun {run_key: $run_key})-[m]->(n:Node)
RETURN n.id AS id, n.kind AS kind, type(m) AS mark
