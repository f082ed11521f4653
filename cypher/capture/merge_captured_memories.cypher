// name: merge_captured_memories
// mode: write
// params: rows
// Stored records whose status a later trace of a captured conversation changed
// (loaders/otel_extend.py), rows [{uid, props}]. A record a committed repair changed since
// (status_run set: cypher/replay/commit_repair_run.cypher) keeps the repair's status: the
// trace's status becomes what was recorded (status_recorded, status_before: what the memory
// patch and `show --original` read), the later step is stored with its edges, and the next
// plan sees it. A deleted fault never comes back.
UNWIND $rows AS row
MATCH (n:Node:Memory {uid: row.uid})
WITH n, row, n.status AS kept, n.status_run IS NOT NULL AS repaired
SET n += row.props
FOREACH (_ IN CASE WHEN repaired THEN [1] ELSE [] END |
  SET n.status = kept, n.status_recorded = row.props.status,
      n.status_before = row.props.status)
RETURN count(n) AS changed
