// name: create_staged_step_memory_update
// mode: write
// params: rows
// Steps of type memory_update written into a task's staging copy; rows: [{uid, props}].
// CREATE, not MERGE: ingest always clears the staging copy first (provenance/ingest.py), so
// every row is new, and a retried batch would be caught by the count check before the swap.
UNWIND $rows AS row
CREATE (n:Node:Step:MemoryUpdate {uid: row.uid})
SET n += row.props
