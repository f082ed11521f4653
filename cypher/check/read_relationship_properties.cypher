// name: read_relationship_properties
// mode: read
// params:
// `provrepair db check`, phase 2: every relationship's attributes read, type by type.
MATCH ()-[r:CHAIN]->()
RETURN 'CHAIN' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:CITE]->()
RETURN 'CITE' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:SUPPORT]->()
RETURN 'SUPPORT' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:PRODUCE]->()
RETURN 'PRODUCE' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:DELETE]->()
RETURN 'DELETE' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:UPDATE]->()
RETURN 'UPDATE' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:CONSOLIDATE]->()
RETURN 'CONSOLIDATE' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:SUPERSEDE]->()
RETURN 'SUPERSEDE' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:DERIVE]->()
RETURN 'DERIVE' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:INITIATE]->()
RETURN 'INITIATE' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:FAULTY]->()
RETURN 'FAULTY' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:SEED]->()
RETURN 'SEED' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:AFFECTED]->()
RETURN 'AFFECTED' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:SUPPORTED]->()
RETURN 'SUPPORTED' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:QUARANTINED]->()
RETURN 'QUARANTINED' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:INVALIDATED]->()
RETURN 'INVALIDATED' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:ANSWER_RELEVANT]->()
RETURN 'ANSWER_RELEVANT' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:REPLAY]->()
RETURN 'REPLAY' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:PRESERVED]->()
RETURN 'PRESERVED' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:SUSPICIOUS]->()
RETURN 'SUSPICIOUS' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:REPLAYS]->()
RETURN 'REPLAYS' AS type, count(properties(r)) AS read
UNION ALL
MATCH ()-[r:OF_RECORD]->()
RETURN 'OF_RECORD' AS type, count(properties(r)) AS read
