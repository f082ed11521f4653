"""How the lockstep (repair/plan/lockstep.py) merges the statements of many plans into one per
query and splits the rows back: each plan gets exactly the rows its own statement returns."""

from __future__ import annotations

from typing import Any

from provrepair.provenance.store.base import BATCH_ROWS
from provrepair.repair.plan.lockstep import _joined, _merged, _Request


def edge_row(edges: list[tuple[str, str, str]], far: list[str]) -> dict[str, Any]:
    """One row of an edge query (list_out_edges.cypher): (anchor, type, far uid) per edge."""
    return {"anchors": [a for a, _, _ in edges], "labels": [t for _, t, _ in edges],
            "sufficient": [False] * len(edges), "uids": [w for _, _, w in edges],
            "far_uid": far, "far_id": [u.split("/")[1] for u in far]}


def test_one_statement_per_query_and_each_plan_gets_its_own_rows() -> None:
    tasks = [_Request("get_task", {"task_key": k}) for k in ("~a", "~b")]
    a = _Request("list_out_edges", {"uids": ["~a/m", "~a/s1"], "labels": ["CITE"]})
    b = _Request("list_out_edges", {"uids": ["~b/m"], "labels": ["CITE"]})
    other = _Request("list_out_edges", {"uids": ["~c/m"], "labels": ["DERIVE"]})
    statements = list(_merged([*tasks, a, b, other]))
    assert [(s.name, s.params) for s in statements] == [
        ("get_tasks", {"task_keys": ["~a", "~b"]}),
        ("list_out_edges", {"labels": ["CITE"], "uids": ["~a/m", "~a/s1", "~b/m"]}),
        ("list_out_edges", {"labels": ["DERIVE"], "uids": ["~c/m"]})]

    got = dict(statements[0].split([{"task_key": "~b", "props": {"id": "b"}},
                                    {"task_key": "~a", "props": {"id": "a"}}]))
    assert got[tasks[0]] == [{"task_key": "~a", "props": {"id": "a"}}]
    assert got[tasks[1]] == [{"task_key": "~b", "props": {"id": "b"}}]

    row = edge_row([("~a/m", "CITE", "~a/s1"), ("~b/m", "CITE", "~b/s1"),
                    ("~a/s1", "CITE", "~a/s2"), ("~a/m", "CITE", "~a/s2")],
                   ["~a/s1", "~b/s1", "~a/s2"])
    got = dict(statements[1].split([row]))
    assert got[a] == [edge_row([("~a/m", "CITE", "~a/s1"), ("~a/s1", "CITE", "~a/s2"),
                                ("~a/m", "CITE", "~a/s2")], ["~a/s1", "~a/s2"])]
    assert got[b] == [edge_row([("~b/m", "CITE", "~b/s1")], ["~b/s1"])]
    empty = dict(statements[1].split([edge_row([], [])]))
    assert empty[b] == [edge_row([], [])]  # as the query returns for anchors without edges


def test_a_plan_whose_uids_span_two_statements_gets_one_row() -> None:
    uids = [f"~a/n{i}" for i in range(BATCH_ROWS + 5)]
    request = _Request("list_in_edges", {"uids": uids, "labels": ["CITE"]})
    first, second = _merged([request])
    assert len(first.params["uids"]) == BATCH_ROWS and len(second.params["uids"]) == 5
    parts = [part for s, rows in ((first, [edge_row([(uids[0], "CITE", "~a/x")], ["~a/x"])]),
                                  (second, [edge_row([(uids[-1], "CITE", "~a/y")], ["~a/y"])]))
             for r, part in s.split(rows) if r is request]
    assert _joined(request, parts) == [edge_row([(uids[0], "CITE", "~a/x"),
                                                 (uids[-1], "CITE", "~a/y")], ["~a/x", "~a/y"])]
