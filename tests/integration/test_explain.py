"""`provrepair plan --explain ID`: why a node got its disposition, on hand-written cases
whose plans tests/cases/planner/expected.json fixes (evidence, inherited verdicts, rejected
inputs, answer paths, the replay rules)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.errors import CaseError
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from provrepair.repair.plan import compute_plan
from provrepair.repair.plan.explain import explain
from tests.conftest import Cli

CASES = Path(__file__).resolve().parent.parent / "cases" / "planner"


def explained(store: GraphStore, file: str, node_id: str) -> dict[str, Any]:
    case = parse_case(json.loads((CASES / file).read_text()))
    ingest_case(store, case)
    plan, trace = compute_plan(store, case.task_id)
    return explain(plan, trace, node_id)


def test_inherited_verdicts_name_their_parents(store: GraphStore) -> None:
    """tool_inheritance: plan s_103 is supported by same-turn u_1; action s_104 inherits it,
    observation s_105 inherits s_104's; s_106 also reads the affected claim s_102."""
    plan_step = explained(store, "tool_inheritance.json", "s_103")
    assert plan_step["support"].startswith("preserved by trusted evidence u_1")
    assert "supported" in plan_step["dispositions"] and "preserved" in plan_step["dispositions"]
    action = explained(store, "tool_inheritance.json", "s_104")
    assert action["support"] == "inherits the supported verdict of s_103"
    observation = explained(store, "tool_inheritance.json", "s_105")
    assert observation["support"] == "inherits the supported verdict of s_104"
    reader = explained(store, "tool_inheritance.json", "s_106")
    assert reader["support"].startswith("not checkable on its own")
    assert reader["replay"] == "unsupported and answer-relevant (rule 4)"
    assert reader["answer_relevance"].startswith("reaches the final answer: s_106")


def test_rejected_inputs_say_why(store: GraphStore) -> None:
    """support_inadmissible_sources: every sufficient input of s_106 is inadmissible."""
    info = explained(store, "support_inadmissible_sources.json", "s_106")
    assert info["support"].startswith("checked, unsupported: ")
    reasons = dict(part.split(" ", 1) for part in
                   info["support"].removeprefix("checked, unsupported: ").split("; "))
    assert {"s_101", "s_102", "s_104", "m_001"} <= set(reasons)
    assert reasons["s_104"] == "not admissible evidence"
    # in trace order on every engine (each lists a node's inputs in an order of its own)
    assert list(reasons) == ["m_f003", "m_001", "s_101", "s_102", "s_104", "s_105"]
    assert info["affected"].startswith("reached from its seed: m_f003")


def test_seed_and_fault_and_untouched_nodes(store: GraphStore) -> None:
    """fault_failed_delete: s_201 is r(m_001), replayed as a seed although supported;
    s_101 is earlier than t_r and not affected."""
    seed = explained(store, "fault_failed_delete.json", "s_201")
    assert seed["affected"] == "seed r(m_001) = s_201 (t_r = 201)"
    assert seed["replay"] == "a provenance seed is replayed to regenerate its record (rule 6)"
    fault = explained(store, "fault_failed_delete.json", "m_001")
    assert fault["affected"] == "diagnosed faulty memory (seed s_201)"
    assert "deleted" in fault["dispositions"]
    early = explained(store, "fault_failed_delete.json", "s_101")
    assert early["affected"].startswith("not affected")
    assert early["support"] == "not a candidate" and early["replay"] == "not replayed"


def test_an_unknown_id_is_a_case_error_naming_it(store: GraphStore) -> None:
    with pytest.raises(CaseError, match="nope"):
        explained(store, "tool_inheritance.json", "nope")


def test_cli_explain_json_and_error(cli: Cli) -> None:
    assert cli("ingest", str(CASES / "tool_inheritance.json")).returncode == 0
    task = json.loads((CASES / "tool_inheritance.json").read_text())["task_id"]
    done = cli("plan", "--task", task, "--explain", "s_104", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["support"] == "inherits the supported verdict of s_103"
    bad = cli("plan", "--task", task, "--explain", "nope")
    assert bad.returncode == 2
    assert bad.stderr.startswith("CaseError: ") and "nope" in bad.stderr
