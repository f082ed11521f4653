"""Traces of our own runs, read back, never miss contamination (issue 28; README
"Dependencies"). Generated benchmark cases and the bundled example are exported as the run
an outside agent would have traced (an OTLP trace made with the real
OpenTelemetry SDK, messages as JSON strings and as structured values, each request carrying
the whole history or what the step cited; an OpenAI-style transcript, with the requests
each assistant message was produced by and without them, the conservative reading), read
back by the loaders, and for every memory record as the single fault the plan of the read-back run must
affect every node the native plan affects (loaders/trace_export.py,
benchmark/soundness.py). A sample here (bench/trace_soundness.py runs the
whole corpus and measures the over-approximation); a few plans also go through the real store
and the real planner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from provrepair.benchmark.generate import generate_cases
from provrepair.benchmark.reference import plan_in_memory
from provrepair.benchmark.soundness import check_faults, id_map
from provrepair.loaders.case_files import load_cases
from provrepair.loaders.trace_export import EXPORTS, read_back
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.models import Case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan import plan

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shopping_poisoned_price.json"
def sample() -> list[Case]:
    return [*generate_cases(11, limit=8), *load_cases([EXAMPLE])]


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return sample()


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_no_fault_is_missed(cases: list[Case], name: str) -> None:
    missed: list[Any] = []
    faults = 0
    for native in cases:
        exported = EXPORTS[name](native)
        ingested = read_back(name, exported, native.task_id)
        assert ingested.task_id == native.task_id
        for check in check_faults(native, ingested, exported.origin):
            faults += 1
            if check.missed:
                missed.append((native.task_id, check.fault, check.missed))
    assert faults > 100 and missed == []


@pytest.mark.parametrize("name", ["otel-structured-history", "transcript"])
def test_the_real_planner_agrees_on_read_back_runs(falkordb_store: GraphStore,
                                                   cases: list[Case], name: str) -> None:
    """The read-back run stored and planned by the product: the same affected set as the
    reference planner, which contains the native plan's (mapped ids)."""
    native = cases[0]
    exported = EXPORTS[name](native)
    ingested = read_back(name, exported, native.task_id)
    ingest_case(falkordb_store, ingested, replace=True)
    mapping = id_map(native, ingested, exported.origin)
    for fault in [m.memory_id for m in native.memory_store
                  if m.memory_id in {r.memory_id for r in ingested.memory_store}][:4]:
        stored = set(plan(falkordb_store, native.task_id, [fault]).affected_ids)
        assert stored == set(plan_in_memory(ingested, [fault])["affected_ids"])
        wanted = {mapping[x] for x in plan_in_memory(native, [fault])["affected_ids"]}
        assert wanted <= stored
