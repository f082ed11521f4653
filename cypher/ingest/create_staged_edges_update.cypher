// name: create_staged_edges_update
// mode: write
// params: rows
// UPDATE edges of a task's staging copy; rows: [{src, dst}] (uids). One text per relationship
// type (types cannot be parameters; one CREATE per type was measured faster than
// merge_edges.cypher's FOREACH dispatch, BENCHMARKS.md "Ingest"). CREATE: see
// create_staged_memories.cypher.
UNWIND $rows AS row
MATCH (a:Node {uid: row.src})
MATCH (b:Node {uid: row.dst})
CREATE (a)-[r:UPDATE]->(b)
