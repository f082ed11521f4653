// name: list_namespace_records
// mode: read
// params: namespace
// Every agent id the shared memory's conversations recorded (provenance/agent_records.py):
// a namespace repair allocates the ids of the records it writes past them
// (repair/namespace_repair.py), so two conversations never write two records under one id.
MATCH (a:AgentRecord)
WITH a
WHERE a.namespace = $namespace
RETURN a.record_id AS record_id
