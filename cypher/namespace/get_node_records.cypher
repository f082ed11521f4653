// name: get_node_records
// mode: read
// params: uids
// Content and agent id of these nodes (the answers a namespace plan reports and the records
// a task's faults are: repair/plan/namespace.py).
UNWIND $uids AS u
MATCH (n:Node {uid: u})
RETURN n.uid AS uid, n.id AS id, n.content AS content, n.record_id AS record_id
