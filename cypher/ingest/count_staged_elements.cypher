// name: count_staged_elements
// mode: read
// params: staging_key
// The nodes and provenance edges of a task's staging copy, checked against the case before
// the swap: the staged batches are CREATEs, and a batch the client re-sent after a lost
// reply (redis-py retries on connection errors) would otherwise leave duplicates unseen.
// Edges are counted by one expansion from the indexed task key (a per-node pattern
// comprehension summed took ×4 the time on FalkorDB, BENCHMARKS.md "Ingest").
MATCH (n:Node {task_key: $staging_key})
WITH count(n) AS nodes
OPTIONAL MATCH (:Node {task_key: $staging_key})-[r]->(:Node)
RETURN nodes, count(r) AS edges
