// name: delete_task
// mode: write
// params: task_key, issued, read_only, unknown
// Removes a task's nodes, edges and task record in one statement (atomic on both engines).
// Used to clear a staging copy left by an interrupted ingest. The live capture's journal of
// the task goes too: a deleted conversation is not brought back by its next trace. Of the call
// log (:ToolCall) stay the calls that may have acted in the world, as swap_staged_task keeps
// them (`issued`, `read_only`, `unknown`: provenance/state/calls.py kept_call_params): what a
// repair sent is not forgotten, so a task ingested or recorded again under the id never sends
// those calls again; approvals, skips and shown calls go (README, "When a person must decide").
// A kept call's `earlier_run`: the run of the deleted version that sent it (`history`).
// FalkorDB 4.16 guard (docs/engines.md, "Deleting nodes"): a node deletion is silently
// dropped from every label matrix not yet resized to the graph's node capacity (the label
// is then scanned over a node with no attributes: 'Attempted to access undefined
// attribute', or a crash). A label scan resizes its matrix, so the statement scans every
// label (one row each, LIMIT 1) before it deletes; the same statement, so no other
// writer can grow the graph in between. tests/unit/test_store_check_queries.py checks the list.
OPTIONAL MATCH (sync0:Node) WITH sync0 LIMIT 1
OPTIONAL MATCH (sync1:Task) WITH sync1 LIMIT 1
OPTIONAL MATCH (sync2:UserInput) WITH sync2 LIMIT 1
OPTIONAL MATCH (sync3:Memory) WITH sync3 LIMIT 1
OPTIONAL MATCH (sync4:Step) WITH sync4 LIMIT 1
OPTIONAL MATCH (sync5:MemoryRead) WITH sync5 LIMIT 1
OPTIONAL MATCH (sync6:Claim) WITH sync6 LIMIT 1
OPTIONAL MATCH (sync7:Plan) WITH sync7 LIMIT 1
OPTIONAL MATCH (sync8:ToolAction) WITH sync8 LIMIT 1
OPTIONAL MATCH (sync9:ToolObservation) WITH sync9 LIMIT 1
OPTIONAL MATCH (sync10:FinalAnswer) WITH sync10 LIMIT 1
OPTIONAL MATCH (sync11:MemoryWrite) WITH sync11 LIMIT 1
OPTIONAL MATCH (sync12:MemoryDelete) WITH sync12 LIMIT 1
OPTIONAL MATCH (sync13:MemoryUpdate) WITH sync13 LIMIT 1
OPTIONAL MATCH (sync14:MemoryConsolidate) WITH sync14 LIMIT 1
OPTIONAL MATCH (sync15:EvalRecord) WITH sync15 LIMIT 1
OPTIONAL MATCH (sync16:RepairRun) WITH sync16 LIMIT 1
OPTIONAL MATCH (sync17:TaskLock) WITH sync17 LIMIT 1
OPTIONAL MATCH (sync18:Faulty) WITH sync18 LIMIT 1
OPTIONAL MATCH (sync19:Seed) WITH sync19 LIMIT 1
OPTIONAL MATCH (sync20:Affected) WITH sync20 LIMIT 1
OPTIONAL MATCH (sync21:Supported) WITH sync21 LIMIT 1
OPTIONAL MATCH (sync22:Quarantined) WITH sync22 LIMIT 1
OPTIONAL MATCH (sync23:Invalidated) WITH sync23 LIMIT 1
OPTIONAL MATCH (sync24:AnswerRelevant) WITH sync24 LIMIT 1
OPTIONAL MATCH (sync25:Replayed) WITH sync25 LIMIT 1
OPTIONAL MATCH (sync26:Preserved) WITH sync26 LIMIT 1
OPTIONAL MATCH (sync27:Suspicious) WITH sync27 LIMIT 1
OPTIONAL MATCH (sync28:Regenerated) WITH sync28 LIMIT 1
OPTIONAL MATCH (sync29:CaptureSpan) WITH sync29 LIMIT 1
OPTIONAL MATCH (sync30:AgentRecord) WITH sync30 LIMIT 1
OPTIONAL MATCH (sync31:NamespaceRun) WITH sync31 LIMIT 1
OPTIONAL MATCH (sync32:ToolCall) WITH sync32 LIMIT 1
WITH count(*) AS synced
OPTIONAL MATCH (t:Task {task_key: $task_key})
DETACH DELETE t
WITH count(*) AS tasks
OPTIONAL MATCH (run:RepairRun {task_key: $task_key})
DETACH DELETE run
WITH count(*) AS runs
OPTIONAL MATCH (call:ToolCall {task_key: $task_key})
WHERE (NOT call.status IN $issued AND coalesce(call.attempts, 0) = 0)
   OR coalesce(call.side_effect, '') = $read_only
DELETE call
WITH count(*) AS dropped
OPTIONAL MATCH (kept:ToolCall {task_key: $task_key})
SET kept.status = CASE WHEN kept.status IN $issued THEN kept.status ELSE $unknown END,
    kept.earlier_run = kept.run_id
WITH count(*) AS relabelled
OPTIONAL MATCH (c:CaptureSpan {task_key: $task_key})
DELETE c
WITH count(*) AS journal
OPTIONAL MATCH (n:Node {task_key: $task_key})
DETACH DELETE n
RETURN count(n) AS nodes
