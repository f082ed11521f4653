// name: delete_nodes
// mode: write
// params: uids
// Nodes by uid, with their relationships: those of an export target the source no longer
// has, and those of a recorder's half-written batch (provenance/recorder.py). Idempotent.
UNWIND $uids AS uid
MATCH (n:Node {uid: uid})
DETACH DELETE n
