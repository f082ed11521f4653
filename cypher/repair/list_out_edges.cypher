// name: list_out_edges
// mode: read
// params: uids, labels
// Every provenance edge leaving these nodes, with its sufficient flag: the planner's edge
// cache (repair/plan/graph.py) fetches a node's outgoing edges once per plan and filters
// labels per stage. $labels: the provenance relationship types (EdgeLabel). The pattern
// names no type on purpose: FalkorDB walks one relation matrix per listed type, so
// `[r:CHAIN|CITE|…]` (ten types) cost twice the server time of an untyped step filtered on
// type(r) (BENCHMARKS.md, "Planner"). Nodes written by repair runs (origin_run set) are not
// recorded provenance: never returned. The filter sits after WITH so FalkorDB starts from
// the anchored node (a WHERE on the far side right after MATCH makes it scan every :Node).
// The far node carries no label: every provenance relationship joins two :Node nodes, and
// FalkorDB checks a label per edge walked (a third of the count of 6.6k edges, measured).
// One row per anchor, its edges as three parallel lists: a third of the values of one row
// per edge, measured ~20% less client time on a 3.5k-edge hop (BENCHMARKS.md, "Planner").
UNWIND $uids AS u
MATCH (v:Node {uid: u})-[r]->(w)
WITH u, r, w
WHERE w.origin_run IS NULL AND type(r) IN $labels
RETURN u AS anchor, collect(type(r)) AS labels,
       collect(coalesce(r.sufficient, false)) AS sufficient, collect(w.uid) AS uids
