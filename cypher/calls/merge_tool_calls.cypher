// name: merge_tool_calls
// mode: write
// params: rows
// The call log (repair/tools/calllog.py): one :ToolCall per call of a task version, keyed by
// the task and the call's hash (provenance/state/calls.py call_id), written before a call is
// sent (its intent), after it answered (its result), and when a stop shows it or a person
// decides about it. Idempotent: a repeated row sets the same values again; `created` is the
// time the call first entered the log.
// rows: [{call_key, task_key, created, props}] (props: status and that transition's fields)
UNWIND $rows AS row
MERGE (c:ToolCall {call_key: row.call_key})
ON CREATE SET c.created = row.created
SET c.task_key = row.task_key, c += row.props
RETURN count(c) AS written
