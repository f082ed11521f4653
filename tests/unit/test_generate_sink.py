"""CaseSink: the agent runtime records into memory, validated event by event like the
Recorder, and the result is a valid case."""

from __future__ import annotations

import pytest

from provrepair.benchmark.agent import Agent, MutationSpec, TurnScript
from provrepair.benchmark.scripts import derived_fact, lookup, tool, tpl
from provrepair.benchmark.sink import CaseSink
from provrepair.provenance.errors import CaseError
from provrepair.provenance.models import MemoryRecord
from provrepair.provenance.validate import validate_case
from provrepair.provenance.vocab import MemorySource, MemoryStatus, StepType
from provrepair.repair.reasoners.offline import OfflineReasoner
from provrepair.repair.tools.packs import domain_tools
from provrepair.repair.tools.registry import ToolRegistry

WORLD = {"catalog": {"P0199": {"name": "headphones",
                               "prices": {"StoreA": "$67.00", "StoreC": "$63.99"}}}}


def sink() -> CaseSink:
    return CaseSink("t1", domain="shopping", tools=[tool("compare_price")], world=WORLD)


def memory(memory_id: str, **update: object) -> MemoryRecord:
    record = MemoryRecord(memory_id=memory_id, task_id="t1", content="tracks P0199",
                          source=MemorySource.USER_INPUT, last_modified_by=None, created_at=1,
                          last_modified_at=1, derived_from=[], supersedes=None,
                          status=MemoryStatus.ACTIVE, entity_id="P0199", fact_key="name",
                          fact_value="headphones")
    return record.model_copy(update=update)


def test_an_agent_run_becomes_a_valid_case() -> None:
    target = sink()
    agent = Agent(target, OfflineReasoner(), ToolRegistry(target.tools, WORLD,
                                                          domain_tools("shopping")),
                  domain="shopping")
    agent.add_memory(memory("m_001"))
    key = "price_P0199"
    answer = agent.run_turn(1, TurnScript(
        content="Compare prices for P0199", claim=tpl("You track {n}", n=lookup("P0199", "name")),
        plan=tpl("Compare {n}", n=lookup("P0199", "name")),
        tool_calls=[{"fn": "tool_call", "args": {"tool": "compare_price",
                                                 "args": {"product_id": "P0199"}}}],
        answer=tpl("Cheapest: {s}", s={"fn": "argmin", "args": {"fact_key": key,
                                                                "entities": None}}),
        mutations=[MutationSpec("write", tpl("StoreC: {v}", v=lookup("StoreC", key)),
                                [derived_fact("StoreC", key, lookup("StoreC", key))])]))
    target.faults(["m_002"])
    case = validate_case(target.case())
    assert answer == "Cheapest: StoreC"
    assert [s.step_type for s in case.trace][-1] is StepType.MEMORY_WRITE
    assert case.memory_store[1].fact_value == "$63.99"
    assert case.diagnosed_faults == ["m_002"] and case.world == WORLD


def test_a_duplicate_id_is_refused_at_once() -> None:
    target = sink()
    target.memory(memory("m_001"))
    with pytest.raises(CaseError, match="duplicate id"):
        target.user_input(input_id="m_001", turn=1, content="hi", timestamp=2)


def test_only_lifecycle_fields_of_a_recorded_memory_may_change() -> None:
    target = sink()
    target.memory(memory("m_001"))
    target.memory(memory("m_001", status=MemoryStatus.DELETED, last_modified_at=5))
    assert target.memories["m_001"].status is MemoryStatus.DELETED
    with pytest.raises(CaseError, match="cannot change"):
        target.memory(memory("m_001", content="something else"))


def test_a_reference_that_never_resolves_fails_the_case() -> None:
    target = sink()
    target.step(step_id="s_001", step_type="claim", content="x", prev_step_ids=[],
                next_step_ids=[], invalidated_memory_ids=[], generated_memory_ids=[],
                used_ids=["m_404"], timestamp=3, turn=1)
    with pytest.raises(CaseError, match="m_404"):
        target.case()
