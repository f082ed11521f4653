// name: list_step_inputs
// mode: read
// params: uids
// Everything an action or observation reads directly (used_ids: CITE, SUPPORT) and its
// CHAIN predecessors: the controlling plans of an action, the generating actions of an
// observation, and the other records whose verdict the inheritance rule checks (§3).
UNWIND $uids AS u
MATCH (w:Node)-[r:CITE|SUPPORT|CHAIN]->(v:Node {uid: u})
WITH u, r, w
WHERE w.origin_run IS NULL
RETURN u AS to_uid, type(r) AS label,
       w.uid AS uid
