// name: count_nodes
// mode: read
// params: live_prefix
// Node counts per kind across the stored tasks (for `db status`): staging copies of an
// unfinished ingest and pending nodes of a repair that died before committing are left out.
MATCH (n:Node)
WHERE n.task_key STARTS WITH $live_prefix
  AND @visible(n)
RETURN n.kind AS kind, count(n) AS nodes
ORDER BY kind
