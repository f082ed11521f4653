// name: get_nodes
// mode: read
// params: uids
// The rule-relevant properties of nodes named by uid (--faults, --explain targets).
UNWIND $uids AS u
MATCH (w:Node {uid: u})
RETURN w.uid AS uid, w.id AS id, w.task_key AS task_key, w.kind AS kind,
       w.step_type AS step_type, w.status AS status, w.ts AS ts, w.turn AS turn,
       w.position AS position
