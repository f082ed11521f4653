// name: list_in_edges
// mode: read
// params: uids, labels
// Every provenance edge entering these nodes, with its sufficient flag: the backward half of
// the planner's edge cache (the whole inputs of the invalidated tool observations, whose
// generating action may lie anywhere, and of a node --explain names; see
// list_out_edges.cypher for the untyped pattern, $labels and the one-row result). Edges from
// nodes written by repair runs, and a repair run's marks (other types), are not returned.
// Written from the indexed node (v:Node {uid}): as (w)-[r]->(v {uid}) a Bolt server planned
// it from w and scanned (0.36 s against 0.013 s per statement on ArcadeDB, issue 27).
UNWIND $uids AS u
MATCH (v:Node {uid: u})<-[r]-(w)
WITH u, r, w
WHERE @recorded(w) AND type(r) IN $labels
WITH collect(u) AS anchors, collect(type(r)) AS labels,
     collect(coalesce(r.sufficient, false)) AS sufficient, collect(w.uid) AS uids,
     collect(DISTINCT w) AS far
RETURN anchors, labels, sufficient, uids,
       [n IN far | n.uid] AS far_uid, [n IN far | n.id] AS far_id,
       [n IN far | n.task_key] AS far_task_key, [n IN far | n.kind] AS far_kind,
       [n IN far | n.step_type] AS far_step_type, [n IN far | n.status] AS far_status,
       [n IN far | n.ts] AS far_ts, [n IN far | n.turn] AS far_turn,
       [n IN far | n.position] AS far_position
