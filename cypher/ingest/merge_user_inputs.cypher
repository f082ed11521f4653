// name: merge_user_inputs
// mode: write
// params: rows
// rows: [{uid, props}] — one statement per batch, idempotent on uid.
UNWIND $rows AS row
MERGE (n:Node {uid: row.uid})
SET n:UserInput, n += row.props
