"""The echo sweep's precision (repair/plan/echo.py, values.py; issue 39): a copy is a record
whose value came from the fault, not one that merely states it. On the paper's travel case,
with a structured fault (m_f000: F0028's airline is Qantas) and a free-text one (m_006:
"User's travel budget: $1500"), the sweep reports the copies written with other case and
spacing, and none of the look-alikes: a longer number, a record the user's own message
stated, the same value under the user's own statement of the fact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from provrepair.repair.plan import compute_plan

TRAVEL = Path(__file__).resolve().parents[1] / "cases" / "replay" / "paper_travel_wrong_user.json"
BUDGET = "User's travel budget: $1500"


def memory(memory_id: str, content: str, created: int, fact: tuple[str, str, str] | None = None,
           ) -> dict[str, Any]:
    entity, key, value = fact or (None, None, None)
    return {"memory_id": memory_id, "task_id": "travel_task_048", "content": content,
            "source": "agent_summary", "last_modified_by": None, "created_at": created,
            "last_modified_at": created, "derived_from": [], "supersedes": None,
            "trust_score": None, "status": "active", "fact_key": key, "fact_value": value,
            "entity_id": entity, "sufficient_from": []}


def write(step_id: str, ts: int, cites: list[str], memory_id: str) -> dict[str, Any]:
    return {"step_id": step_id, "task_id": "travel_task_048", "step_type": "memory_write",
            "content": "noted", "prev_step_ids": [], "next_step_ids": [],
            "invalidated_memory_ids": [], "generated_memory_ids": [memory_id],
            "used_ids": cites, "sufficient_ids": [], "timestamp": ts, "turn": 2,
            "derivation": None, "facts": None}


def lookalike_case() -> dict[str, Any]:
    raw = json.loads(TRAVEL.read_text(encoding="utf-8"))
    raw.pop("evaluation")
    raw["session"][1]["content"] += f" For the record: {BUDGET.lower()}; I fly with QANTAS."
    raw["memory_store"] += [
        memory("m_c001", "  user's TRAVEL budget:\u00a0$1500 ", 12),           # copy: spacing, case
        memory("m_c002", "Flight note", 13, ("F0028", "airline", "qantas")),  # copy: case
        memory("m_c003", BUDGET, 205),                     # copy: its writer read no source of it
        memory("m_l001", "User's travel budget: $15000", 14),        # a longer number
        memory("m_l002", BUDGET, 204),                     # the user's own message stated it
        memory("m_l003", "Airline per the user", 206, ("F0028", "airline", "Qantas")),
        memory("m_l004", "Budget", 15, ("user", "budget", "$1500")),  # structured: another fact
    ]
    raw["trace"] += [write("s_011", 204, ["u_2"], "m_l002"),
                     write("s_012", 205, ["s_005"], "m_c003"),
                     write("s_013", 206, ["u_2"], "m_l003")]
    return raw


def test_copies_are_found_normalised_and_look_alikes_are_not(store: GraphStore) -> None:
    ingest_case(store, parse_case(lookalike_case()))
    plan, _ = compute_plan(store, "travel_task_048", ["m_f000", "m_006"])
    assert plan.suspected_copies == {"m_c001": "m_006", "m_c002": "m_f000", "m_c003": "m_006"}
