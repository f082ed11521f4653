// name: swap_staged_task
// mode: write
// params: task_key, staging_key, issued, read_only, unknown
// The atomic step of ingest (one statement; FalkorDB has no multi-statement transactions):
// only if the staged copy has its task record, drop the old version of the task (with its
// repair runs, which describe a graph that no longer exists) and move the staged copy into
// place by rewriting its keys (uid = key + "/" + encoded id). The call log keeps the calls
// that may have acted in the world (`issued`: provenance/state/calls.py ISSUED; or one sent
// before, attempts > 0, that a decision relabelled: is_issued there) of tools that are not
// `read_only`, so a repair of the new version never sends one again; a read-only answer, and
// the calls that only waited on a person (shown, approved, skipped, refused), go with the old
// version. A kept call not DONE/FAILED/ISSUING (a decision since it was sent) becomes
// `unknown` (ISSUING): a decision holds for its version only (calls.py kept_call_params).
// `earlier_run`: the run of a dropped version that sent a kept call (`history` lists it apart).
// A crash before this statement leaves the old version untouched; after it, the new one.
// `swapped` is 0 when there was no staged copy (aggregates still return one row).
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
MATCH (st:Task {task_key: $staging_key})
OPTIONAL MATCH (old:Task {task_key: $task_key})
DETACH DELETE old
WITH DISTINCT st
OPTIONAL MATCH (run:RepairRun {task_key: $task_key})
DETACH DELETE run
WITH DISTINCT st
OPTIONAL MATCH (call:ToolCall {task_key: $task_key})
WHERE (NOT call.status IN $issued AND coalesce(call.attempts, 0) = 0)
   OR coalesce(call.side_effect, '') = $read_only
DELETE call
WITH DISTINCT st
OPTIONAL MATCH (kept:ToolCall {task_key: $task_key})
SET kept.status = CASE WHEN kept.status IN $issued THEN kept.status ELSE $unknown END,
    kept.earlier_run = kept.run_id
WITH DISTINCT st
OPTIONAL MATCH (o:Node {task_key: $task_key})
DETACH DELETE o
WITH DISTINCT st
SET st.task_key = $task_key, st.complete = true
WITH st
OPTIONAL MATCH (n:Node {task_key: $staging_key})
SET n.task_key = $task_key, n.uid = $task_key + substring(n.uid, size($staging_key))
RETURN count(DISTINCT st) AS swapped, count(n) AS nodes
