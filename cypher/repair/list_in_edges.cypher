// name: list_in_edges
// mode: read
// params: uids, labels
// Every provenance edge entering these nodes, with its sufficient flag: the backward half of
// the planner's edge cache (inputs of tool actions and observations; see
// list_out_edges.cypher for the untyped pattern and $labels). Edges from nodes written by
// repair runs, and a repair run's marks (other types), are not returned.
UNWIND $uids AS u
MATCH (w)-[r]->(v:Node {uid: u})
WITH u, r, w
WHERE w.origin_run IS NULL AND type(r) IN $labels
RETURN u AS anchor, collect(type(r)) AS labels,
       collect(coalesce(r.sufficient, false)) AS sufficient, collect(w.uid) AS uids
