"""The Cypher spelling of each node-state rule (provenance/state/runs.py CYPHER_RULES, which the
queries name as `@visible(n)`) agrees with its Python predicate, on both engines, over every
state a node can be in: recorded, recorded and changed by a commit, written by a run that has
not committed, and written by one that has."""

from __future__ import annotations

from provrepair.provenance.state.runs import pending_props, visible_node
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.queries import parse_query

NODES = {
    "recorded": {},
    "recorded, changed by a commit": {"committed": True},
    "pending of r1": pending_props("r1"),
    "committed by r1": {**pending_props("r1"), "committed": True},
    "pending of r2": pending_props("r2"),
}
WRITE = parse_query("""// name: write_nodes
// mode: write
// params: rows
UNWIND $rows AS row
CREATE (n:Node {uid: row.uid})
SET n += row.props
""", "tests/write_nodes.cypher")
READ = parse_query("""// name: read_rules
// mode: read
// params: run_id
MATCH (n:Node)
RETURN n.uid AS uid, @recorded(n) AS recorded, @repair_written(n) AS repair_written,
       @written_by(n, $run_id) AS written_by, @visible(n) AS visible,
       @committed_repair_written(n) AS committed_repair_written, @pending(n) AS pending,
       @pending_of(n, $run_id) AS pending_of
""", "tests/read_rules.cypher")


def test_cypher_rules_agree_with_the_python_predicates(store: GraphStore) -> None:
    store._execute(WRITE, {"rows": [{"uid": uid, "props": props} for uid, props in NODES.items()]})
    rows = {row.pop("uid"): row for row in store._execute(READ, {"run_id": "r1"})}
    assert set(rows) == set(NODES)
    for uid, props in NODES.items():
        written = props.get("origin_run") is not None
        expected = {
            "recorded": not written, "repair_written": written,
            "written_by": props.get("origin_run") == "r1",
            "visible": visible_node(props),
            "committed_repair_written": written and visible_node(props),
            "pending": written and not visible_node(props),
            "pending_of": props.get("origin_run") == "r1" and not visible_node(props),
        }
        assert {k: bool(v) for k, v in rows[uid].items()} == expected, uid
