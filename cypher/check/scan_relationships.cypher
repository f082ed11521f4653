// name: scan_relationships
// mode: read
// params:
// `provrepair db check`, phase 1: every relationship type scanned; a relationship whose
// type reads back otherwise, or whose end has no label, is stray. One part per type of
// EdgeLabel, RunMark and RepairEdge.
MATCH (a)-[r:CHAIN]->(b)
RETURN 'CHAIN' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'CHAIN' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:CITE]->(b)
RETURN 'CITE' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'CITE' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:SUPPORT]->(b)
RETURN 'SUPPORT' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'SUPPORT' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:PRODUCE]->(b)
RETURN 'PRODUCE' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'PRODUCE' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:DELETE]->(b)
RETURN 'DELETE' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'DELETE' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:UPDATE]->(b)
RETURN 'UPDATE' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'UPDATE' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:CONSOLIDATE]->(b)
RETURN 'CONSOLIDATE' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'CONSOLIDATE' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:SUPERSEDE]->(b)
RETURN 'SUPERSEDE' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'SUPERSEDE' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:DERIVE]->(b)
RETURN 'DERIVE' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'DERIVE' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:INITIATE]->(b)
RETURN 'INITIATE' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'INITIATE' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:FAULTY]->(b)
RETURN 'FAULTY' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'FAULTY' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:SEED]->(b)
RETURN 'SEED' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'SEED' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:AFFECTED]->(b)
RETURN 'AFFECTED' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'AFFECTED' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:SUPPORTED]->(b)
RETURN 'SUPPORTED' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'SUPPORTED' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:QUARANTINED]->(b)
RETURN 'QUARANTINED' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'QUARANTINED' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:INVALIDATED]->(b)
RETURN 'INVALIDATED' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'INVALIDATED' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:ANSWER_RELEVANT]->(b)
RETURN 'ANSWER_RELEVANT' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'ANSWER_RELEVANT' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:REPLAY]->(b)
RETURN 'REPLAY' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'REPLAY' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:PRESERVED]->(b)
RETURN 'PRESERVED' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'PRESERVED' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:SUSPICIOUS]->(b)
RETURN 'SUSPICIOUS' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'SUSPICIOUS' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:REPLAYS]->(b)
RETURN 'REPLAYS' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'REPLAYS' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
UNION ALL
MATCH (a)-[r:OF_RECORD]->(b)
RETURN 'OF_RECORD' AS type, count(r) AS scanned,
       sum(CASE WHEN type(r) = 'OF_RECORD' AND size(labels(a)) > 0 AND size(labels(b)) > 0
           THEN 0 ELSE 1 END) AS stray
