"""Why a node got its disposition: the deciding rule of the plan, first."""

from __future__ import annotations

import pytest

from provrepair.provenance.vocab import RunMark as M
from provrepair.view.why import new_node_reason, reasons

SEEDS = {"s_5": ["m_f"]}


@pytest.mark.parametrize("marks, step_type, node_id, first", [
    ({M.FAULTY, M.AFFECTED}, None, "m_f", "rule 1: diagnosed faulty memory"),
    ({M.QUARANTINED, M.AFFECTED}, None, "m_2", "rule 2: affected memory without independent"),
    ({M.SUPPORTED, M.AFFECTED, M.PRESERVED}, "claim", "s_2", "rule 3: affected, but independently"),
    ({M.REPLAY, M.ANSWER_RELEVANT, M.INVALIDATED, M.AFFECTED}, "claim", "s_8", "rule 4: unsupported"),
    ({M.SUSPICIOUS, M.INVALIDATED, M.AFFECTED}, "claim", "s_9", "rule 5: unsupported and not"),
    ({M.REPLAY, M.SEED, M.SUPPORTED, M.AFFECTED}, "memory_write", "s_5",
     "rule 6: provenance seed r(m) of m_f"),
    ({M.REPLAY, M.ANSWER_RELEVANT, M.INVALIDATED}, "final_answer", "s_12",
     "rule 7: the final answer is always regenerated"),
    ({M.REPLAY, M.INVALIDATED, M.AFFECTED}, "tool_action", "s_10", "replayed: an invalidated prerequisite"),
    ({M.INVALIDATED, M.ANSWER_RELEVANT, M.AFFECTED}, "tool_observation", "s_11", "invalidated; not replayed"),
    ({M.AFFECTED}, None, "m_3", "affected: reached from a fault seed"),
    ({M.PRESERVED}, "plan", "s_1", "preserved: not invalidated"),
])
def test_deciding_rule_comes_first(marks: set[M], step_type: str | None, node_id: str,
                                   first: str) -> None:
    lines = reasons({"id": node_id, "step_type": step_type}, marks, SEEDS)
    assert lines[0].startswith(first), lines


def test_a_supported_seed_says_it_is_replayed_anyway() -> None:
    lines = reasons({"id": "s_5", "step_type": "memory_write"},
                    {M.REPLAY, M.SEED, M.SUPPORTED, M.AFFECTED}, SEEDS)
    assert any("rule 3" in line and "replayed anyway" in line for line in lines)
    assert lines[-1].startswith("in the contaminated region")


def test_untouched_nodes_have_no_reason() -> None:
    assert reasons({"id": "u_1"}, set(), SEEDS) == []


def test_nodes_a_repair_wrote() -> None:
    step = {"kind": "step", "origin_run": "run-1", "replaces": "s_8"}
    memory = {"kind": "memory", "origin_run": "run-1", "replaces": "m_f"}
    assert new_node_reason(step) == ["written by repair run run-1: replayed version of step s_8"]
    assert new_node_reason(memory) == [
        "written by repair run run-1: regenerated record replacing m_f"]
