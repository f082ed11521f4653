// name: count_staged_elements
// mode: read
// params: staging_key
// The nodes and provenance edges of a task's staging copy, checked against the case before
// the swap: the staged batches are CREATEs, and a batch the client re-sent after a lost
// reply (redis-py retries on connection errors) would otherwise leave duplicates unseen.
MATCH (n:Node {task_key: $staging_key})
RETURN count(n) AS nodes, sum(size([(n)-[r]->(:Node) | r])) AS edges
