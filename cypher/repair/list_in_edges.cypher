// name: list_in_edges
// mode: read
// params: uids
// Every provenance edge entering these nodes, with its sufficient flag: the backward half of
// the planner's edge cache (support predecessors, step inputs, closure predecessors; see
// list_out_edges.cypher). Edges from nodes written by repair runs are not returned.
UNWIND $uids AS u
MATCH (w:Node)-[r:CHAIN|CITE|SUPPORT|PRODUCE|DELETE|UPDATE|CONSOLIDATE|SUPERSEDE|DERIVE|INITIATE]->(v:Node {uid: u})
WITH u, r, w
WHERE w.origin_run IS NULL
RETURN u AS anchor, type(r) AS label, coalesce(r.sufficient, false) AS sufficient,
       w.uid AS uid
