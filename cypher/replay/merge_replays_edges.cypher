// name: merge_replays_edges
// mode: write
// params: rows
// rows: [{src, dst}] (uids): a replayed step REPLAYS the step it replaces.
UNWIND $rows AS row
MATCH (a:Node {uid: row.src})
MATCH (b:Node {uid: row.dst})
MERGE (a)-[:REPLAYS]->(b)
