// name: create_namespace_run_index
// mode: write
// params:
// A namespace repair's run (repair/namespace_repair.py), found by its key.
CREATE INDEX FOR (r:NamespaceRun) ON (r.run_key)
