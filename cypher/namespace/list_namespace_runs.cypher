// name: list_namespace_runs
// mode: read
// params: namespace
// Every namespace repair run of a memory namespace, oldest first (repair/namespace_repair.py).
MATCH (r:NamespaceRun {namespace: $namespace})
RETURN properties(r) AS props
ORDER BY r.created, r.run_id
