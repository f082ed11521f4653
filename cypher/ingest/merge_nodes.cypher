// name: merge_nodes
// mode: write
// params: rows
// Nodes of any kind in one statement, for the live recorder's small flushes; rows:
// [{uid, type, props}] where type names the label set (step_claim, memories, user_inputs,
// ...: rows.py node_type), idempotent on uid. The
// labels sit in each MERGE pattern, as in merge_step_claim.cypher; one statement instead of
// one per kind, because a flush of 64 events touched up to a dozen kinds and each statement
// is a round trip (BENCHMARKS.md, "Live recorder").
UNWIND $rows AS row
FOREACH (_ IN CASE WHEN row.type = 'step_claim' THEN [1] ELSE [] END |
  MERGE (n:Node:Step:Claim {uid: row.uid}) SET n += row.props)
FOREACH (_ IN CASE WHEN row.type = 'step_final_answer' THEN [1] ELSE [] END |
  MERGE (n:Node:Step:FinalAnswer {uid: row.uid}) SET n += row.props)
FOREACH (_ IN CASE WHEN row.type = 'step_memory_consolidate' THEN [1] ELSE [] END |
  MERGE (n:Node:Step:MemoryConsolidate {uid: row.uid}) SET n += row.props)
FOREACH (_ IN CASE WHEN row.type = 'step_memory_delete' THEN [1] ELSE [] END |
  MERGE (n:Node:Step:MemoryDelete {uid: row.uid}) SET n += row.props)
FOREACH (_ IN CASE WHEN row.type = 'step_memory_read' THEN [1] ELSE [] END |
  MERGE (n:Node:Step:MemoryRead {uid: row.uid}) SET n += row.props)
FOREACH (_ IN CASE WHEN row.type = 'step_memory_update' THEN [1] ELSE [] END |
  MERGE (n:Node:Step:MemoryUpdate {uid: row.uid}) SET n += row.props)
FOREACH (_ IN CASE WHEN row.type = 'step_memory_write' THEN [1] ELSE [] END |
  MERGE (n:Node:Step:MemoryWrite {uid: row.uid}) SET n += row.props)
FOREACH (_ IN CASE WHEN row.type = 'step_plan' THEN [1] ELSE [] END |
  MERGE (n:Node:Step:Plan {uid: row.uid}) SET n += row.props)
FOREACH (_ IN CASE WHEN row.type = 'step_tool_action' THEN [1] ELSE [] END |
  MERGE (n:Node:Step:ToolAction {uid: row.uid}) SET n += row.props)
FOREACH (_ IN CASE WHEN row.type = 'step_tool_observation' THEN [1] ELSE [] END |
  MERGE (n:Node:Step:ToolObservation {uid: row.uid}) SET n += row.props)
FOREACH (_ IN CASE WHEN row.type = 'memories' THEN [1] ELSE [] END |
  MERGE (n:Node:Memory {uid: row.uid}) SET n += row.props)
FOREACH (_ IN CASE WHEN row.type = 'user_inputs' THEN [1] ELSE [] END |
  MERGE (n:Node:UserInput {uid: row.uid}) SET n += row.props)
