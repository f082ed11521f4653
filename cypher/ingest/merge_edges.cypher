// name: merge_edges
// mode: write
// params: rows
// rows: [{src, dst, label, sufficient}] (uids). Relationship types cannot be parameters, so
// the type is chosen by FOREACH/CASE dispatch over vocab.EdgeLabel; `sufficient` is set only
// on the labels that carry it. MERGE makes re-ingest idempotent.
UNWIND $rows AS row
MATCH (a:Node {uid: row.src})
MATCH (b:Node {uid: row.dst})
FOREACH (_ IN CASE WHEN row.label = 'CHAIN' THEN [1] ELSE [] END | MERGE (a)-[:CHAIN]->(b))
FOREACH (_ IN CASE WHEN row.label = 'CITE' THEN [1] ELSE [] END | MERGE (a)-[r:CITE]->(b) SET r.sufficient = row.sufficient)
FOREACH (_ IN CASE WHEN row.label = 'SUPPORT' THEN [1] ELSE [] END | MERGE (a)-[r:SUPPORT]->(b) SET r.sufficient = row.sufficient)
FOREACH (_ IN CASE WHEN row.label = 'PRODUCE' THEN [1] ELSE [] END | MERGE (a)-[:PRODUCE]->(b))
FOREACH (_ IN CASE WHEN row.label = 'DELETE' THEN [1] ELSE [] END | MERGE (a)-[:DELETE]->(b))
FOREACH (_ IN CASE WHEN row.label = 'UPDATE' THEN [1] ELSE [] END | MERGE (a)-[:UPDATE]->(b))
FOREACH (_ IN CASE WHEN row.label = 'CONSOLIDATE' THEN [1] ELSE [] END | MERGE (a)-[:CONSOLIDATE]->(b))
FOREACH (_ IN CASE WHEN row.label = 'SUPERSEDE' THEN [1] ELSE [] END | MERGE (a)-[r:SUPERSEDE]->(b) SET r.sufficient = row.sufficient)
FOREACH (_ IN CASE WHEN row.label = 'DERIVE' THEN [1] ELSE [] END | MERGE (a)-[r:DERIVE]->(b) SET r.sufficient = row.sufficient)
FOREACH (_ IN CASE WHEN row.label = 'INITIATE' THEN [1] ELSE [] END | MERGE (a)-[:INITIATE]->(b))
