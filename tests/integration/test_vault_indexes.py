"""The evaluation vault has its own indexes, in its own graph (FalkorDB) or database (Neo4j):
ingest looks evaluations up by eval_key and prunes them by task_key on every case, which
scanned the label before and made bulk ingest quadratic in the number of tasks."""

from __future__ import annotations

from typing import Any

from provrepair.provenance.store.base import GraphStore


def indexed(store: GraphStore, target: str) -> set[tuple[str, str]]:
    """(label, property) pairs indexed in the graph or the vault, as the engine reports."""
    if store.engine == "falkordb":
        graph = store._graphs[target]  # type: ignore[attr-defined]
        rows: list[Any] = graph.ro_query("CALL db.indexes() YIELD label, properties "
                                         "RETURN label, properties").result_set
        return {(label, p) for label, props in rows for p in props}
    database = store._databases[target]  # type: ignore[attr-defined]
    records, _, _ = store._driver.execute_query(  # type: ignore[attr-defined]
        "SHOW INDEXES YIELD labelsOrTypes, properties RETURN labelsOrTypes, properties",
        database_=database)
    return {(r["labelsOrTypes"][0], p) for r in records if r["labelsOrTypes"]
            for p in r["properties"] or []}


def test_the_vault_is_indexed_where_its_records_live(store: GraphStore) -> None:
    vault = indexed(store, "vault")
    assert {("EvalRecord", "eval_key"), ("EvalRecord", "task_key")} <= vault
    if store.engine == "falkordb":  # a graph of its own: the planner's graph has none of it
        assert ("EvalRecord", "eval_key") not in indexed(store, "graph")
    store.ensure_schema()  # idempotent: a second run changes nothing and raises nothing
    assert indexed(store, "vault") == vault
