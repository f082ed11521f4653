// name: create_namespace_run_constraint
// mode: write
// params:
// A namespace repair's run (repair/namespace_repair.py): one node per key.
CREATE CONSTRAINT namespace_run_key IF NOT EXISTS FOR (r:NamespaceRun) REQUIRE r.run_key IS UNIQUE
