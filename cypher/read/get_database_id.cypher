// name: get_database_id
// mode: read
// params:
// Neo4j's own id of the database (db.info): the same from every member of a cluster and
// under every address, so `export` can tell a copy onto the store it reads from, however the
// two were addressed (provenance/store/neo4j.py identity). Neo4j only: a FalkorDB store is
// known by its server's run id, and a Bolt server without db.info (ArcadeDB) by its address.
CALL db.info() YIELD id
RETURN id
