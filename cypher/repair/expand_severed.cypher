// name: expand_severed
// mode: read
// params: uids
// One hop forward in the severed graph G⁻ (docs/method.md §4): propagation labels only.
// The planner drops removed memories (deleted or quarantined) from the frontier itself, so
// paths never pass through them; answer relevance is then read off the hops it collected.
UNWIND $uids AS u
MATCH (v:Node {uid: u})-[r:INITIATE|CITE|SUPPORT|PRODUCE|DELETE|UPDATE|CONSOLIDATE|SUPERSEDE|DERIVE]->(w:Node)
WITH u, r, w
WHERE w.origin_run IS NULL
RETURN u AS from_uid, type(r) AS label,
       w.uid AS uid
