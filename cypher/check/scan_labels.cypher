// name: scan_labels
// mode: read
// params:
// `provrepair db check`, phase 1 (provenance/check.py): every label scanned without reading
// an attribute. A node a label scan returns without carrying the label is a stray entry
// (a deletion the engine dropped from the label matrix: docs/engines.md, "Deleting
// nodes"); reading its attributes would fail or crash the server, so phase 2 runs only
// when no label has one. One part per label of provenance/vocab.py NodeLabel (checked
// by tests/unit/test_store_check_queries.py); sum() is a float on FalkorDB.
MATCH (n:Node)
RETURN 'Node' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Node' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Task)
RETURN 'Task' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Task' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:UserInput)
RETURN 'UserInput' AS label, count(n) AS scanned,
       sum(CASE WHEN 'UserInput' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Memory)
RETURN 'Memory' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Memory' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Step)
RETURN 'Step' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Step' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:MemoryRead)
RETURN 'MemoryRead' AS label, count(n) AS scanned,
       sum(CASE WHEN 'MemoryRead' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Claim)
RETURN 'Claim' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Claim' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Plan)
RETURN 'Plan' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Plan' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:ToolAction)
RETURN 'ToolAction' AS label, count(n) AS scanned,
       sum(CASE WHEN 'ToolAction' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:ToolObservation)
RETURN 'ToolObservation' AS label, count(n) AS scanned,
       sum(CASE WHEN 'ToolObservation' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:FinalAnswer)
RETURN 'FinalAnswer' AS label, count(n) AS scanned,
       sum(CASE WHEN 'FinalAnswer' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:MemoryWrite)
RETURN 'MemoryWrite' AS label, count(n) AS scanned,
       sum(CASE WHEN 'MemoryWrite' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:MemoryDelete)
RETURN 'MemoryDelete' AS label, count(n) AS scanned,
       sum(CASE WHEN 'MemoryDelete' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:MemoryUpdate)
RETURN 'MemoryUpdate' AS label, count(n) AS scanned,
       sum(CASE WHEN 'MemoryUpdate' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:MemoryConsolidate)
RETURN 'MemoryConsolidate' AS label, count(n) AS scanned,
       sum(CASE WHEN 'MemoryConsolidate' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:RepairRun)
RETURN 'RepairRun' AS label, count(n) AS scanned,
       sum(CASE WHEN 'RepairRun' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:TaskLock)
RETURN 'TaskLock' AS label, count(n) AS scanned,
       sum(CASE WHEN 'TaskLock' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Faulty)
RETURN 'Faulty' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Faulty' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Seed)
RETURN 'Seed' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Seed' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Affected)
RETURN 'Affected' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Affected' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Supported)
RETURN 'Supported' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Supported' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Quarantined)
RETURN 'Quarantined' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Quarantined' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Invalidated)
RETURN 'Invalidated' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Invalidated' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:AnswerRelevant)
RETURN 'AnswerRelevant' AS label, count(n) AS scanned,
       sum(CASE WHEN 'AnswerRelevant' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Replayed)
RETURN 'Replayed' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Replayed' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Preserved)
RETURN 'Preserved' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Preserved' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Suspicious)
RETURN 'Suspicious' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Suspicious' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:Regenerated)
RETURN 'Regenerated' AS label, count(n) AS scanned,
       sum(CASE WHEN 'Regenerated' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:CaptureSpan)
RETURN 'CaptureSpan' AS label, count(n) AS scanned,
       sum(CASE WHEN 'CaptureSpan' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:AgentRecord)
RETURN 'AgentRecord' AS label, count(n) AS scanned,
       sum(CASE WHEN 'AgentRecord' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:NamespaceRun)
RETURN 'NamespaceRun' AS label, count(n) AS scanned,
       sum(CASE WHEN 'NamespaceRun' IN labels(n) THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (n:ToolCall)
RETURN 'ToolCall' AS label, count(n) AS scanned,
       sum(CASE WHEN 'ToolCall' IN labels(n) THEN 0 ELSE 1 END) AS stray
