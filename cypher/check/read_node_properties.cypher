// name: read_node_properties
// mode: read
// params:
// `provrepair db check`, phase 2: every node's attributes read, label by label (run only
// after scan_labels found no stray entry). One part per label of NodeLabel.
MATCH (n:Node)
RETURN 'Node' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Task)
RETURN 'Task' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:UserInput)
RETURN 'UserInput' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Memory)
RETURN 'Memory' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Step)
RETURN 'Step' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:MemoryRead)
RETURN 'MemoryRead' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Claim)
RETURN 'Claim' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Plan)
RETURN 'Plan' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:ToolAction)
RETURN 'ToolAction' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:ToolObservation)
RETURN 'ToolObservation' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:FinalAnswer)
RETURN 'FinalAnswer' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:MemoryWrite)
RETURN 'MemoryWrite' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:MemoryDelete)
RETURN 'MemoryDelete' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:MemoryUpdate)
RETURN 'MemoryUpdate' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:MemoryConsolidate)
RETURN 'MemoryConsolidate' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:RepairRun)
RETURN 'RepairRun' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:TaskLock)
RETURN 'TaskLock' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Faulty)
RETURN 'Faulty' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Seed)
RETURN 'Seed' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Affected)
RETURN 'Affected' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Supported)
RETURN 'Supported' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Quarantined)
RETURN 'Quarantined' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Invalidated)
RETURN 'Invalidated' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:AnswerRelevant)
RETURN 'AnswerRelevant' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Replayed)
RETURN 'Replayed' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Preserved)
RETURN 'Preserved' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Suspicious)
RETURN 'Suspicious' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:Regenerated)
RETURN 'Regenerated' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:CaptureSpan)
RETURN 'CaptureSpan' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:AgentRecord)
RETURN 'AgentRecord' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:NamespaceRun)
RETURN 'NamespaceRun' AS label, count(properties(n)) AS read
UNION ALL
MATCH (n:ToolCall)
RETURN 'ToolCall' AS label, count(properties(n)) AS read
