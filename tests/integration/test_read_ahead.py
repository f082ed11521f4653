"""`GraphStore.read_ahead`: reads sent before their replies are read, on the real engines.

On FalkorDB the statements are written to one connection as they are sent and their replies
read, in order, when first asked for (a plan runs its support check on the server while the
planner works on reach this way); over Bolt each runs when sent and its error is kept for
its call. These hold what the planner relies on: each pending call returns its own
statement's rows whatever order they are asked in, a failing statement raises at its own
call while the others still answer, and after the block (left with replies unread, or by an
exception) the store answers the next query with its own reply, never a stale one left on
the socket.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from provrepair.provenance.errors import StoreError
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.keys import node_uid, task_key
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.queries import parse_query
from tests.helpers import example_case

TASK = "read-ahead"


def stored_uids(store: GraphStore) -> list[str]:
    case = example_case(TASK)
    ingest_case(store, case, replace=True)
    ids = [m.memory_id for m in case.memory_store] + [s.step_id for s in case.trace]
    return [node_uid(task_key(TASK), i) for i in ids[:4]]


def test_each_pending_call_returns_its_own_rows_in_any_order(store: GraphStore) -> None:
    uids = stored_uids(store)
    with store.read_ahead() as reads:
        pending = [reads.send("get_nodes", {"uids": [uid]}) for uid in uids]
        answers = {i: pending[i]() for i in (2, 0, 3, 1)}  # not the order sent
    assert [answers[i][0]["uid"] for i in range(len(uids))] == uids
    assert pending[1]() == answers[1]  # asked again: the same rows, nothing read twice


# A statement every engine rejects when it runs (Neo4j's ArithmeticError `/ by zero`), not
# when it is parsed or planned: a test's own query, beside the product's registry.
DIVIDE = """// name: divide_by
// mode: read
// params: divisor
RETURN 1 / $divisor AS quotient
"""


def test_a_failing_statement_raises_at_its_own_call(store: GraphStore) -> None:
    uids = stored_uids(store)
    divide = parse_query(DIVIDE, "tests/divide_by.cypher")
    store.registry = replace(store.registry, queries={**store.registry.queries, "divide_by": divide})
    with store.read_ahead() as reads:
        before = reads.send("get_nodes", {"uids": uids[:1]})
        broken = reads.send("divide_by", {"divisor": 0})
        after = reads.send("get_nodes", {"uids": uids[1:2]})
        assert after()[0]["uid"] == uids[1]
        assert before()[0]["uid"] == uids[0]
        with pytest.raises(StoreError, match=r"divide_by\.cypher"):
            broken()
        assert reads.send("divide_by", {"divisor": 2})() == [{"quotient": 0}]


def test_the_store_answers_after_a_block_left_with_replies_unread(store: GraphStore) -> None:
    uids = stored_uids(store)
    with store.read_ahead() as reads:
        for uid in uids:
            reads.send("get_nodes", {"uids": [uid]})
    for uid in reversed(uids):  # the pool's connections are back in step
        assert [row["uid"] for row in store.run("get_nodes", {"uids": [uid]})] == [uid]


def test_the_store_answers_after_a_block_left_by_an_exception(store: GraphStore) -> None:
    uids = stored_uids(store)
    with pytest.raises(RuntimeError, match="the caller failed"), store.read_ahead() as reads:
        reads.send("get_nodes", {"uids": uids})
        raise RuntimeError("the caller failed")
    assert [row["uid"] for row in store.run("get_nodes", {"uids": uids[:1]})] == uids[:1]
