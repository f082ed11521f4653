// name: delete_nodes
// mode: write
// params: uids
// Nodes of an export target the source no longer has (a rolled-back repair's), with their
// relationships. Idempotent.
UNWIND $uids AS uid
MATCH (n:Node {uid: uid})
DETACH DELETE n
