// name: expand_affected
// mode: read
// params: frontier
// Nodes written by repair runs (origin_run set) are not recorded provenance: never entered.
// One hop of Reach_m (docs/method.md §2): forward over the propagation labels (E_prop:
// CHAIN never propagates), entering w only if ts(w) >= t_r of the fault being traced.
// frontier: [{uid, tr}]. The filter sits after WITH DISTINCT so FalkorDB starts from the
// anchored frontier node, not from the far side.
UNWIND $frontier AS f
MATCH (v:Node {uid: f.uid})-[r:INITIATE|CITE|SUPPORT|PRODUCE|DELETE|UPDATE|CONSOLIDATE|SUPERSEDE|DERIVE]->(w:Node)
WITH DISTINCT f.uid AS from_uid, f.tr AS tr, type(r) AS label, w
WHERE w.ts >= tr AND w.origin_run IS NULL
RETURN from_uid, tr, label,
       w.uid AS uid
