// name: create_agent_record_constraint
// mode: write
// params:
// One record of a shared agent memory (provenance/agent_records.py): one node per key, also
// when two ingests MERGE it at once.
CREATE CONSTRAINT agent_record_key IF NOT EXISTS FOR (a:AgentRecord) REQUIRE a.record_key IS UNIQUE
