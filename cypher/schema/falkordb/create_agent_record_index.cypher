// name: create_agent_record_index
// mode: write
// params:
// One record of a shared agent memory (provenance/agent_records.py), found by its key.
CREATE INDEX FOR (a:AgentRecord) ON (a.record_key)
