// name: create_node_uid_constraint
// mode: write
// params:
CREATE CONSTRAINT node_uid IF NOT EXISTS FOR (n:Node) REQUIRE n.uid IS UNIQUE
