"""The namespace benchmark (benchmark/namespace_bench.py) on one small history: its metrics
separate the four methods as the issue expects (`python bench/namespace.py bench` runs the
full grid; BENCHMARKS.md, "A fault across a shared memory")."""

from __future__ import annotations

from provrepair.benchmark.namespace_bench import METHODS, score
from provrepair.provenance.store.base import GraphStore


def test_the_methods_differ_where_the_issue_says(falkordb_store: GraphStore) -> None:
    scores = {m: score(falkordb_store, 6, 2, 2, m) for m in METHODS}
    ours = scores["namespace"]
    assert ours.gold >= 2  # the fault reached later sessions' answers
    assert (ours.recall, ours.precision, ours.latest_recovered) == (1.0, 1.0, True)
    assert ours.benign_preserved == 1.0 and ours.contaminated_fixed == 1.0
    alone = scores["per_conversation"]
    assert alone.recall < 1.0 and alone.contaminated_fixed < 1.0
    reset = scores["store_reset"]
    assert reset.benign_preserved == 0.0 and reset.precision < 1.0
    assert scores["value_sweep"].replayed_steps <= ours.replayed_steps
