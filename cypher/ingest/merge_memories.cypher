// name: merge_memories
// mode: write
// params: rows
// Memories; rows: [{uid, props}], idempotent on uid (labels in the MERGE pattern: see
// merge_step_claim.cypher for why).
UNWIND $rows AS row
MERGE (n:Node:Memory {uid: row.uid})
SET n += row.props
