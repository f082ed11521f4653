// name: list_support_inputs
// mode: read
// params: uids, labels, any_sufficiency
// The inputs the independent-support check (docs/method.md §3) can use: edges entering these
// nodes with a type in $labels (SUPPORT, CITE, DERIVE, SUPERSEDE) that are marked
// sufficient, plus every edge whose type is in $any_sufficiency (DERIVE: a memory is
// checkable only if it has a DERIVE input at all). Insufficient edges cannot preserve
// anything, and most inputs are insufficient: filtering them here keeps them off the wire
// (--explain fetches a node's whole input list when it names what was rejected).
UNWIND $uids AS u
MATCH (w)-[r]->(v:Node {uid: u})
WITH u, r, w
WHERE w.origin_run IS NULL AND type(r) IN $labels
  AND (r.sufficient = true OR type(r) IN $any_sufficiency)
RETURN u AS anchor, collect(type(r)) AS labels,
       collect(coalesce(r.sufficient, false)) AS sufficient, collect(w.uid) AS uids
