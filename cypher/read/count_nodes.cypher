// name: count_nodes
// mode: read
// params:
// Node counts per kind across the whole store (for `db status`).
MATCH (n:Node)
RETURN n.kind AS kind, count(n) AS nodes
ORDER BY kind
