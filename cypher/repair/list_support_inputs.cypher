// name: list_support_inputs
// mode: read
// params: uids, labels, any_sufficiency
// The inputs the independent-support check (docs/method.md §3) can use: edges entering these
// nodes with a type in $labels (SUPPORT, CITE, DERIVE, SUPERSEDE) that are marked
// sufficient, plus every edge whose type is in $any_sufficiency (DERIVE: a memory is
// checkable only if it has a DERIVE input at all). Insufficient edges cannot preserve
// anything, and most inputs are insufficient: filtering them here keeps them off the wire
// (--explain fetches a node's whole input list when it names what was rejected).
// Written from the indexed node (v:Node {uid}): as (w)-[r]->(v {uid}) a Bolt server planned
// it from w and scanned (0.36 s against 0.013 s per statement on ArcadeDB, issue 27).
UNWIND $uids AS u
MATCH (v:Node {uid: u})<-[r]-(w)
WITH u, r, w
WHERE @recorded(w) AND type(r) IN $labels
  AND (r.sufficient = true OR type(r) IN $any_sufficiency)
WITH collect(u) AS anchors, collect(type(r)) AS labels,
     collect(coalesce(r.sufficient, false)) AS sufficient, collect(w.uid) AS uids,
     collect(DISTINCT w) AS far
RETURN anchors, labels, sufficient, uids,
       [n IN far | n.uid] AS far_uid, [n IN far | n.id] AS far_id,
       [n IN far | n.task_key] AS far_task_key, [n IN far | n.kind] AS far_kind,
       [n IN far | n.step_type] AS far_step_type, [n IN far | n.status] AS far_status,
       [n IN far | n.ts] AS far_ts, [n IN far | n.turn] AS far_turn,
       [n IN far | n.position] AS far_position
