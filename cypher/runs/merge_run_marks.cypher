// name: merge_run_marks
// mode: write
// params: run_key, rows
// The run's disposition of each node, as one relationship per disposition from the run
// (scoped to the run; a graph browser shows a run's contamination by following them).
// rows: [{uid, mark}]; relationship types come from vocab.RunMark by FOREACH dispatch.
MATCH (r:RepairRun {run_key: $run_key})
UNWIND $rows AS row
MATCH (n:Node {uid: row.uid})
FOREACH (_ IN CASE WHEN row.mark = 'FAULTY' THEN [1] ELSE [] END | MERGE (r)-[:FAULTY]->(n))
FOREACH (_ IN CASE WHEN row.mark = 'SEED' THEN [1] ELSE [] END | MERGE (r)-[:SEED]->(n))
FOREACH (_ IN CASE WHEN row.mark = 'AFFECTED' THEN [1] ELSE [] END | MERGE (r)-[:AFFECTED]->(n))
FOREACH (_ IN CASE WHEN row.mark = 'SUPPORTED' THEN [1] ELSE [] END | MERGE (r)-[:SUPPORTED]->(n))
FOREACH (_ IN CASE WHEN row.mark = 'QUARANTINED' THEN [1] ELSE [] END | MERGE (r)-[:QUARANTINED]->(n))
FOREACH (_ IN CASE WHEN row.mark = 'INVALIDATED' THEN [1] ELSE [] END | MERGE (r)-[:INVALIDATED]->(n))
FOREACH (_ IN CASE WHEN row.mark = 'ANSWER_RELEVANT' THEN [1] ELSE [] END | MERGE (r)-[:ANSWER_RELEVANT]->(n))
FOREACH (_ IN CASE WHEN row.mark = 'REPLAY' THEN [1] ELSE [] END | MERGE (r)-[:REPLAY]->(n))
FOREACH (_ IN CASE WHEN row.mark = 'PRESERVED' THEN [1] ELSE [] END | MERGE (r)-[:PRESERVED]->(n))
FOREACH (_ IN CASE WHEN row.mark = 'SUSPICIOUS' THEN [1] ELSE [] END | MERGE (r)-[:SUSPICIOUS]->(n))
