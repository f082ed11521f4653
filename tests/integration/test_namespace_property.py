"""Property: the namespace plan (repair/plan/namespace.py: the planner per conversation, in time
order, to a fixpoint) equals the plan of ONE task made by concatenating the conversations in
time order with each version of a record joined across them (benchmark/namespace_cases.py
`concatenate`),
planned by the independent in-memory reference (benchmark/reference.py), projected back onto
the conversations: the affected region, the supported steps, the removed records, the
invalidated steps, the conversations reached and those whose final answer was affected. And
the plan made in rounds on guessed seeds, all conversations of a round at once, is the plan
made one conversation at a time, each conversation's plan the planner's alone.

Histories are generated (a hypothesis tape per conversation): 2-5 conversations of one memory,
each reading records earlier ones wrote or that were planted in the store, citing them, and
writing records derived from them, new versions of records they read (a later snapshot
holding the earlier version beside it at times), or versions of records they never read,
written afresh; at times a stale snapshot (an earlier version than the latest), or a
conversation that started before the one whose writes it read; 1-2 faulty records. A copy
whose version cannot be told (`History.unknown_copies`: a planted record's, a recording
that renders what it read unlike its writer) is handed every version it may be: there the
plan must hold all the reference's and may hold more; so where versions of a record share a
text (`History.collided`: which of them a copy is cannot be told either).
PROVREPAIR_NAMESPACE_EXAMPLES sets the number of examples (default 25, what `make test`
runs); `python bench/namespace.py property` runs 500.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provrepair.benchmark.namespace_cases import History, concatenate, random_history
from provrepair.benchmark.reference import plan_in_memory
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan.model import NamespacePlan
from provrepair.repair.plan.namespace import NamespaceTrace, plan_namespace
from tests.strategies import TapeChooser

EXAMPLES = int(os.environ.get("PROVREPAIR_NAMESPACE_EXAMPLES", "25"))


def projected(history: History) -> dict[str, Any]:
    """What the reference's plan of the concatenated task says about each conversation."""
    joined = concatenate(history)
    plan = plan_in_memory(joined.case)

    def nodes(ids: list[str]) -> set[tuple[str, str]]:
        return {pair for i in ids for pair in joined.origin[i]}

    affected = nodes(plan["affected_ids"])
    steps = {(t, s.step_id) for case in history.cases for s in case.trace
             for t in [case.task_id]}
    invalidated = nodes(plan["invalidate_claim_ids"])
    return {
        "affected": affected,
        "supported_steps": nodes(plan["supported_ids"]) & steps,
        "removed_records": {joined.record_of.get(i, i)
                            for i in [*plan["delete_memory_ids"], *plan["quarantine_memory_ids"]]},
        "invalidated": invalidated,
        "conversations": sorted({task for task, _ in affected}),
        "affected_answers": sorted(task for task, final in joined.finals.items()
                                   if (task, final.split(".", 1)[1]) in invalidated),
    }


def namespace_result(plan: NamespacePlan, trace: NamespaceTrace, history: History
                     ) -> dict[str, Any]:
    records = trace.records
    pairs = [(c.task_id, c.plan) for c in plan.conversations]
    steps = {(c.task_id, s.step_id) for c in history.cases for s in c.trace}
    return {
        "affected": {(t, i) for t, p in pairs for i in p.affected_ids},
        "supported_steps": {(t, i) for t, p in pairs for i in p.supported_ids} & steps,
        "removed_records": {records.get((t, i), i) for t, p in pairs
                            for i in [*p.delete_memory_ids, *p.quarantine_memory_ids]},
        "invalidated": {(t, i) for t, p in pairs for i in p.invalidate_claim_ids},
        "conversations": sorted(t for t, _ in pairs),
        "affected_answers": sorted(a.task_id for a in plan.affected_answers),
    }


def check(store: GraphStore, history: History, namespace: str) -> None:
    for case in history.cases:
        ingest_case(store, case)
    plan, trace = plan_namespace(store, namespace, history.faults)
    got, want = namespace_result(plan, trace, history), projected(history)
    if history.unknown_copies() or history.collided:  # never less, maybe more
        # (more affected, so fewer steps with untainted support)
        assert all(set(want[k]) <= set(got[k]) for k in want if k != "supported_steps"), \
            (got, want)
    else:
        assert got == want
    # Planned in rounds on guessed seeds (repair/plan/namespace.py "Rounds"), all plans of a
    # round at once (repair/plan/lockstep.py): the plan made one conversation at a time,
    # each by the paper's planner alone on the store (every conversation's plan included).
    assert plan_namespace(store, namespace, history.faults, speculate=False)[0] == plan


@st.composite
def histories(draw: Any) -> tuple[History, str]:
    namespace = f"ns-{uuid.uuid4().hex[:8]}"
    conversations = draw(st.integers(2, 5))
    tape = TapeChooser(draw(st.binary(min_size=40 * conversations, max_size=60 * conversations)))
    return random_history(tape, conversations, namespace=namespace, prefix=namespace), namespace


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(histories())
def test_namespace_plan_equals_the_concatenated_task(falkordb_store: GraphStore,
                                                     drawn: tuple[History, str]) -> None:
    check(falkordb_store, *drawn)
