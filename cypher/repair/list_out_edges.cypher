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
// One row per statement: the edges as four parallel lists (anchor, type, sufficient, far
// uid), and the properties the rules read of every far node, once each, as parallel lists
// (the columns of get_nodes.cypher, prefixed far_): the far nodes come with their edges, so
// no second statement per hop looks them up by uid again (BENCHMARKS.md, "Planner").
UNWIND $uids AS u
MATCH (v:Node {uid: u})-[r]->(w)
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
