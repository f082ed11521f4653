// name: list_copy_evidence
// mode: read
// params: uids, input_kind, observation_type, ok
// Trusted inputs of the step that wrote each record (the echo sweep's independence check,
// repair/plan/echo.py): what the writer (s)-[:PRODUCE]->(m) cites from outside the agent —
// a user input of its own turn ($input_kind), or a tool observation that succeeded
// ($observation_type, $ok) — with its content, so Python can ask whether it states the
// value. A record whose writer was told the value by the user or the world has a source
// other than the fault: it is not a copy. One row per (record, input).
UNWIND $uids AS u
MATCH (m:Node {uid: u})<-[:PRODUCE]-(s:Node)
MATCH (s)<-[:CITE]-(p:Node)
WITH u, s, p
WHERE (p.kind = $input_kind AND p.turn = s.turn)
   OR (p.step_type = $observation_type AND p.status = $ok)
RETURN u AS uid, p.id AS evidence_id, p.content AS evidence
ORDER BY uid, evidence_id
