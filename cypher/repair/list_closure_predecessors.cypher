// name: list_closure_predecessors
// mode: read
// params: uids
// One backward hop of ExecClosure (§4): direct predecessors over the propagation labels, plus
// the generating action of an observation when it is linked only by CHAIN (prev_step_ids).
UNWIND $uids AS u
MATCH (w:Node)-[r:INITIATE|CITE|SUPPORT|PRODUCE|DELETE|UPDATE|CONSOLIDATE|SUPERSEDE|DERIVE|CHAIN]->(v:Node {uid: u})
WITH DISTINCT u, v, type(r) AS label, w
WHERE w.origin_run IS NULL AND (label <> 'CHAIN' OR (v.step_type = 'tool_observation' AND w.step_type = 'tool_action'))
RETURN u AS to_uid, label,
       w.uid AS uid
