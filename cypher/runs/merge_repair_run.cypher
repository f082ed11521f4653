// name: merge_repair_run
// mode: write
// params: run_key, task_key, props
// A repair run of a task: id, method, created (epoch ms), status, the plan as JSON.
// Written first with status 'writing' and last with its final status, so a run interrupted
// in between is visible as such and never read as a finished plan.
MERGE (r:RepairRun {run_key: $run_key})
SET r.task_key = $task_key, r += $props
