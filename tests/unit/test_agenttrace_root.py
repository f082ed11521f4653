"""AgentTrace-style picks the root cause where the contamination entered (the earliest
contaminated step the backward walk from the failure reaches), not the final answer that
the paper's printed f_back = 1 − d/d_max would pick (benchmark/methods/agenttrace.py)."""

from __future__ import annotations

import json
from pathlib import Path

from provrepair.benchmark.methods.agenttrace import WEIGHTS, Scorer
from provrepair.provenance.models import Case
from provrepair.provenance.validate import parse_case

TRAVEL = Path(__file__).resolve().parents[1] / "cases" / "replay" / "paper_travel_wrong_user.json"


def final_turn_only() -> Case:
    """The paper's travel case cut to its final turn: a read of the wrong-user record, a
    claim from the read, the answer from the claim."""
    raw = json.loads(TRAVEL.read_text(encoding="utf-8"))
    raw["session"] = [u for u in raw["session"] if u["turn"] == 2]
    raw["memory_store"] = [m for m in raw["memory_store"] if m["memory_id"] != "m_008"]
    raw["trace"] = [s for s in raw["trace"] if s["turn"] == 2]
    read = raw["trace"][0]
    read.update(prev_step_ids=[], used_ids=["m_f000"], content="Retrieved: m_f000")
    raw.pop("evaluation")
    return parse_case(raw)


def printed_formula_root(scorer: Scorer) -> str:
    """The paper's formula as printed (f_back = 1 − d/d_max), for the comparison."""
    candidates = scorer.candidates()
    d_max = max(scorer.back[s.step_id] for s in candidates)

    def score(step_id: str) -> float:
        step = next(s for s in candidates if s.step_id == step_id)
        closer = 1.0 - scorer.back[step_id] / d_max
        return scorer.score(step, d_max) + WEIGHTS["back"] * (closer - scorer.back[step_id] / d_max)
    return max((s.step_id for s in candidates), key=score)


def test_the_root_cause_is_the_read_of_the_fault_not_the_final_answer() -> None:
    case = final_turn_only()
    final = case.trace[-1]
    scorer = Scorer(case, final, affected={"s_008", "s_009", "s_010"}, faults={"m_f000"},
                    suffix_start=case.trace[0].timestamp)
    assert [s.step_id for s in scorer.candidates()] == ["s_008", "s_009", "s_010"]
    assert printed_formula_root(scorer) == "s_010"  # what the printed formula picks
    assert scorer.root_cause().step_id == "s_008"   # where the contamination entered
