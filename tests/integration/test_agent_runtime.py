"""The agent runtime records a real run live; a poisoned write injected into it is then
repaired by the planner and the replay executor, which use the same reasoner interface."""

from __future__ import annotations

from typing import Any

from provrepair.benchmark.agent import Agent, MutationSpec, TurnScript
from provrepair.provenance.models import Fact, MemoryRecord, ToolSpec
from provrepair.provenance.readback import read_case
from provrepair.provenance.recorder import Recorder
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import validate_case
from provrepair.provenance.vocab import MemorySource, StepType
from provrepair.repair.reasoners.base import StepOutput
from provrepair.repair.reasoners.offline import OfflineReasoner
from provrepair.repair.service import repair_task
from provrepair.repair.tools.packs import domain_tools
from provrepair.repair.tools.registry import ToolRegistry

WORLD = {"catalog": {"P0199": {"name": "headphones",
                               "prices": {"StoreA": "$67.00", "StoreB": "$66.95",
                                          "StoreC": "$63.99"}}}}
TOOLS = [ToolSpec(name="compare_price", side_effect=False, compensate=None, idempotent=True)]


def lookup(entity: str, key: str) -> dict[str, Any]:
    return {"fn": "lookup", "args": {"entity_id": entity, "fact_key": key}}


def template(text: str, **bind: Any) -> dict[str, Any]:
    return {"fn": "template", "args": {"text": text, "bind": bind}}


PRODUCT = lookup("user", "tracked_product")
CHEAPEST = {"fn": "argmin", "args": {"fact_key": "price_P0199", "entities": None}}
TURN_1 = TurnScript(
    content="Please check the prices of my headphones and remember the StoreC price.",
    claim=template("You track {p}", p=PRODUCT),
    plan=template("Compare the current prices of {p}", p=PRODUCT),
    tool_calls=[{"fn": "tool_call", "args": {"tool": "compare_price",
                                             "args": {"product_id": PRODUCT}}}],
    answer=template("Prices checked for {p}.", p=PRODUCT),
    mutations=[MutationSpec("write", template("P0199 at StoreC: {c}",
                                              c=lookup("StoreC", "price_P0199")),
                            [Fact(entity_id="StoreC", fact_key="price_P0199", fact_value=None,
                                  derivation=lookup("StoreC", "price_P0199"))],
                            source=MemorySource.TOOL_OBSERVATION)])
TURN_2 = TurnScript(
    content="Which store has the lowest current price for my headphones?",
    claim=template("StoreC sells {p} at {c}", p=PRODUCT, c=lookup("StoreC", "price_P0199")),
    answer=template("The lowest current price for P0199 is at {s}: {v}.", s=CHEAPEST,
                    v={"fn": "lookup", "args": {"entity_id": CHEAPEST,
                                                "fact_key": "price_P0199"}}))


def poison_storec_write(step: Any, output: StepOutput) -> StepOutput:
    """Fault injection: the turn-1 write records a wrong StoreC price."""
    if step.step_type is StepType.MEMORY_WRITE and output.content:
        facts = [f.model_copy(update={"fact_value": "$88.67"}) for f in output.facts or []]
        return StepOutput(content="P0199 at StoreC: $88.67", cited_ids=output.cited_ids,
                          facts=facts)
    return output


def run_session(store: GraphStore, task_id: str, tamper: Any = None) -> tuple[list[str], Agent]:
    recorder = Recorder(store, task_id, domain="shopping", tools=TOOLS, world=WORLD)
    agent = Agent(recorder, OfflineReasoner(), ToolRegistry(TOOLS, WORLD, domain_tools("shopping")),
                  domain="shopping", tamper=tamper)
    agent.add_memory(MemoryRecord(
        memory_id="m_001", task_id=task_id, content="User tracks headphones P0199",
        source=MemorySource.USER_INPUT, last_modified_by=None, created_at=1, last_modified_at=1,
        derived_from=[], supersedes=None, status="active", entity_id="user",
        fact_key="tracked_product", fact_value="P0199"))
    answers = [agent.run_turn(1, TURN_1) or "", agent.run_turn(2, TURN_2) or ""]
    return answers, agent


def test_clean_run_is_recorded_and_answers_right(falkordb_store: GraphStore) -> None:
    answers, agent = run_session(falkordb_store, "agent-clean")
    agent.recorder.faults(["m_001"])
    agent.recorder.close()
    assert answers[1] == "The lowest current price for P0199 is at StoreC: $63.99."
    case = validate_case(read_case(falkordb_store, "agent-clean"))
    kinds = [s.step_type.value for s in case.trace]
    assert kinds[:7] == ["memory_read", "claim", "plan", "tool_action", "tool_observation",
                         "final_answer", "memory_write"]
    write = case.trace[6]
    assert write.sufficient_ids == [case.trace[4].step_id]  # the observation alone entails it
    assert case.memory_store[1].fact_value == "$63.99"


def test_poisoned_write_is_repaired_by_replaying_through_the_same_interface(
        falkordb_store: GraphStore) -> None:
    answers, agent = run_session(falkordb_store, "agent-poisoned", tamper=poison_storec_write)
    assert answers[1] == "The lowest current price for P0199 is at StoreB: $66.95."
    poisoned = next(m for m in agent.memories.values() if m.fact_value == "$88.67")
    agent.recorder.faults([poisoned.memory_id])
    agent.recorder.close()
    report = repair_task(falkordb_store, "agent-poisoned", OfflineReasoner())
    assert report.answer == "The lowest current price for P0199 is at StoreC: $63.99."
    assert poisoned.memory_id in report.deleted
    assert report.new_memory_ids and report.counts["llm_calls"] == 0
