"""Property: the Cypher planner equals a small in-memory implementation of the same spec
(benchmark/reference.py, written independently) on random provenance DAGs.

PROVREPAIR_PROPERTY_EXAMPLES sets the number of examples (default 500, the profile `make test`
runs; over Bolt PROVREPAIR_PROPERTY_BOLT_EXAMPLES, default 60); `python bench/property.py deep`
is the longer profile, and `python bench/property.py mutants` plants the bugs of
bench/mutants.json to show the default profile catches them.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from provrepair.benchmark.reference import plan_in_memory
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.models import Case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan import compute_plan
from provrepair.repair.plan.model import ECHO_SWEEP_FIELDS
from tests.strategies import provenance_cases

EXAMPLES = int(os.environ.get("PROVREPAIR_PROPERTY_EXAMPLES", "500"))
# Over Bolt the same property with fewer examples: the planner's logic is the same code on
# both engines, what the Bolt run adds is each statement executed by the other engine, and
# ArcadeDB (the suite's Bolt server) ingests ~30x slower than FalkorDB: 500 examples took
# 5 minutes of one worker, past `make test`'s budget.
BOLT_EXAMPLES = int(os.environ.get("PROVREPAIR_PROPERTY_BOLT_EXAMPLES", str(min(EXAMPLES, 60))))
ORDERED = {"replay_step_ids", "seeds"}
# the echo sweep reports after planning, beyond the method the reference implements
# (repair/plan/echo.py; tests/integration/test_echo_sweep.py)
NOT_COMPARED = {"task_id", *ECHO_SWEEP_FIELDS}


def normalised(plan: dict[str, Any]) -> dict[str, Any]:
    return {k: (v if k in ORDERED else sorted(v)) for k, v in plan.items() if k not in NOT_COMPARED}


def retasked(case: Case) -> Case:
    """The same case under a fresh task id, so examples never collide in one graph."""
    raw = case.model_dump(mode="json")
    task_id = f"prop-{uuid.uuid4().hex[:10]}"
    raw["task_id"] = task_id
    for section in ("session", "memory_store", "trace"):
        for record in raw[section]:
            record["task_id"] = task_id
    return Case.model_validate(raw)


def check(store: GraphStore, case: Case) -> None:
    case = retasked(case)
    ingest_case(store, case)
    plan, _ = compute_plan(store, case.task_id)
    assert normalised(plan.model_dump()) == normalised(plan_in_memory(case))


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=provenance_cases())
def test_cypher_planner_equals_in_memory_reference(falkordb_store: GraphStore, case: Case) -> None:
    check(falkordb_store, case)


@pytest.mark.neo4j
@settings(max_examples=BOLT_EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=provenance_cases())
def test_cypher_planner_equals_in_memory_reference_over_bolt(neo4j_store: GraphStore,
                                                             case: Case) -> None:
    check(neo4j_store, case)
