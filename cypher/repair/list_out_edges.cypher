// name: list_out_edges
// mode: read
// params: uids
// Every provenance edge leaving these nodes, with its sufficient flag: the planner's edge
// cache (repair/plan/graph.py) fetches a node's outgoing edges once per plan and filters
// labels per stage. Nodes written by repair runs (origin_run set) are not recorded
// provenance: never returned. The filter sits after WITH so FalkorDB starts from the
// anchored node (a WHERE on the far side right after MATCH makes it scan every :Node).
UNWIND $uids AS u
MATCH (v:Node {uid: u})-[r:CHAIN|CITE|SUPPORT|PRODUCE|DELETE|UPDATE|CONSOLIDATE|SUPERSEDE|DERIVE|INITIATE]->(w:Node)
WITH u, r, w
WHERE w.origin_run IS NULL
RETURN u AS anchor, type(r) AS label, coalesce(r.sufficient, false) AS sufficient,
       w.uid AS uid
