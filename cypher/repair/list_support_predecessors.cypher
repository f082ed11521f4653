// name: list_support_predecessors
// mode: read
// params: uids
// Pred_sup(v) of each candidate (docs/method.md §3): nodes p with a SUPPORT, CITE, DERIVE
// or SUPERSEDE edge into v, with the edge's sufficient flag and what Admissible(p) reads.
// Insufficient edges are returned too (flagged): a memory is checkable only if it has a
// DERIVE predecessor at all, and --explain names the evidence that did not count.
UNWIND $uids AS u
MATCH (w:Node)-[r:SUPPORT|CITE|DERIVE|SUPERSEDE]->(v:Node {uid: u})
WITH u, r, w
WHERE w.origin_run IS NULL
RETURN u AS to_uid, type(r) AS label, coalesce(r.sufficient, false) AS sufficient,
       w.uid AS uid
