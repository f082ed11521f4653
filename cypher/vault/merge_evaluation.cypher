// name: merge_evaluation
// mode: write
// params: eval_key, task_key, props
// Evaluation-only data (the case's evaluation block and memory fault_type labels), kept in
// the vault, apart from the graph the planner reads. Keyed by task and content hash so a
// re-ingest never pairs a graph with another version's evaluation.
MERGE (e:EvalRecord {eval_key: $eval_key})
SET e.task_key = $task_key, e += $props
