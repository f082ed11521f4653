// name: merge_user_inputs
// mode: write
// params: rows
// User inputs; rows: [{uid, props}], idempotent on uid (labels in the MERGE pattern: see
// merge_step_claim.cypher for why).
UNWIND $rows AS row
MERGE (n:Node:UserInput {uid: row.uid})
SET n += row.props
