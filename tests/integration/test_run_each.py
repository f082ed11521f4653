"""`GraphStore.run_each`: write statements in order, each atomic, on the real engines.

On FalkorDB the adapter sends a statement before it reads the reply of the one before (the
next batch is encoded while the server writes), so these tests hold what that must not
change: every statement runs once and in order, `done` follows the replies, a failing
statement stops the stream where `run` one by one would stop, and after any failure (the
server's or the caller's own generator) the store answers the next query with its own reply,
never a stale one left on the socket.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from provrepair.provenance.edges import derive_edges
from provrepair.provenance.errors import StoreError
from provrepair.provenance.ingest import ingest_case, staged_statements
from provrepair.provenance.keys import LIVE_PREFIX, staging_key
from provrepair.provenance.state.calls import kept_call_params
from provrepair.provenance.store.base import GraphStore, Statement
from tests.helpers import example_case

SCRATCH = "run-each-scratch"


def statements(task_id: str = SCRATCH) -> list[Statement]:
    case = example_case()
    return [(name, {"rows": rows}) for name, rows in
            staged_statements(staging_key(task_id), case, derive_edges(case), None)]


def scratch_nodes(store: GraphStore) -> int:
    """Remove the scratch copy; the number of its nodes."""
    return int(store.run("delete_task", {"task_key": staging_key(SCRATCH), **kept_call_params()})[0]["nodes"])


def live_node_count(store: GraphStore) -> int:
    return sum(int(r["nodes"]) for r in store.run("count_nodes", {"live_prefix": LIVE_PREFIX}))


def test_every_statement_runs_once_in_order(store: GraphStore) -> None:
    sent = statements()
    seen: list[Any] = []
    store.run_each(iter(sent), seen.append)
    assert [id(p) for p in seen] == [id(p) for _, p in sent]
    nodes = sum(len(p["rows"]) for n, p in sent if not n.startswith("create_staged_edges_"))
    assert scratch_nodes(store) == nodes


def test_a_failing_statement_stops_the_stream(store: GraphStore) -> None:
    first, *rest = statements()
    broken = ("create_staged_user_inputs", {"rows": [{"uid": "x", "props": 5}]})  # SET n += 5
    never: list[Statement] = rest[:1]
    done: list[Any] = []
    with pytest.raises(StoreError) as info:
        store.run_each(iter([first, broken, *never]), done.append)
    assert "create_staged_user_inputs.cypher" in str(info.value)
    assert done == [first[1]]
    assert scratch_nodes(store) == len(first[1]["rows"])  # the broken batch wrote nothing


def test_the_store_answers_after_the_callers_generator_fails(store: GraphStore) -> None:
    """The stream dies with a statement in flight; the next query gets its own reply."""
    ingest_case(store, example_case())
    expected = live_node_count(store)

    def dying() -> Iterator[Statement]:
        yield from statements()[:2]
        raise RuntimeError("the caller's generator broke")

    with pytest.raises(RuntimeError, match="generator broke"):
        store.run_each(dying())
    assert live_node_count(store) == expected  # scratch copies are not live: no race
    assert live_node_count(store) == expected
