// name: merge_steps
// mode: write
// params: rows
// rows: [{uid, props}] with props.step_type. Labels cannot be parameters, so the per-type
// label (vocab.STEP_LABEL) is chosen by FOREACH/CASE dispatch.
UNWIND $rows AS row
MERGE (n:Node {uid: row.uid})
SET n:Step, n += row.props
FOREACH (_ IN CASE WHEN row.props.step_type = 'memory_read' THEN [1] ELSE [] END | SET n:MemoryRead)
FOREACH (_ IN CASE WHEN row.props.step_type = 'claim' THEN [1] ELSE [] END | SET n:Claim)
FOREACH (_ IN CASE WHEN row.props.step_type = 'plan' THEN [1] ELSE [] END | SET n:Plan)
FOREACH (_ IN CASE WHEN row.props.step_type = 'tool_action' THEN [1] ELSE [] END | SET n:ToolAction)
FOREACH (_ IN CASE WHEN row.props.step_type = 'tool_observation' THEN [1] ELSE [] END | SET n:ToolObservation)
FOREACH (_ IN CASE WHEN row.props.step_type = 'final_answer' THEN [1] ELSE [] END | SET n:FinalAnswer)
FOREACH (_ IN CASE WHEN row.props.step_type = 'memory_write' THEN [1] ELSE [] END | SET n:MemoryWrite)
FOREACH (_ IN CASE WHEN row.props.step_type = 'memory_delete' THEN [1] ELSE [] END | SET n:MemoryDelete)
FOREACH (_ IN CASE WHEN row.props.step_type = 'memory_update' THEN [1] ELSE [] END | SET n:MemoryUpdate)
FOREACH (_ IN CASE WHEN row.props.step_type = 'memory_consolidate' THEN [1] ELSE [] END | SET n:MemoryConsolidate)
