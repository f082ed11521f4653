// name: merge_memories
// mode: write
// params: rows
// rows: [{uid, props}] — one statement per batch, idempotent on uid.
UNWIND $rows AS row
MERGE (n:Node {uid: row.uid})
SET n:Memory, n += row.props
