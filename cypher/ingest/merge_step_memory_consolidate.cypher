// name: merge_step_memory_consolidate
// mode: write
// params: rows
// Steps of type memory_consolidate; rows: [{uid, props}], idempotent on uid. The labels sit in the
// MERGE pattern: setting them after MERGE was measured quadratic in the graph's size on
// FalkorDB 4.16 (BENCHMARKS.md), and labels cannot be parameters, so one text per type.
UNWIND $rows AS row
MERGE (n:Node:Step:MemoryConsolidate {uid: row.uid})
SET n += row.props
