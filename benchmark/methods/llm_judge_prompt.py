"""The LLM-judge prompt (paper App. G, "LLM-judge repair" contract; notes §5, §7) and the
validation of its reply.

Input: the session turns, the diagnosed faulty memory ids, compact memory records, compact
trace steps, the wrong final answer, the valid id sets and the executor's output schema.
Output: strict JSON with the plan-schema keys and `reason`. A reply is rejected for invalid
JSON, malformed fields, invalid ids, overlapping step dispositions (replay / preserve /
redundant, and delete / quarantine), or a diagnosed memory left undeleted; the error is
appended to the conversation and the LLM asked again.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from provrepair.provenance.models import Case
from provrepair.provenance.order import final_answer_step
from provrepair.repair.reasoners.prompts import DOMAIN_PROMPTS

STEP_FIELDS = ("invalidate_claim_ids", "replay_step_ids", "preserve_step_ids",
               "redundant_step_ids", "suspicious_step_ids")
MEMORY_FIELDS = ("delete_memory_ids", "quarantine_memory_ids")

INSTRUCTIONS = """You repair a failed execution of a memory-augmented agent. Some memories
were diagnosed as faulty; they may have contaminated later claims, plans, tool calls,
answers and derived memories. Write a rollback plan that the executor will apply:
- delete_memory_ids: memories to delete; it MUST contain every diagnosed faulty memory.
- quarantine_memory_ids: other memories to withdraw from the active store (kept for audit).
- invalidate_claim_ids: steps whose outputs are no longer trusted.
- replay_step_ids: steps to regenerate, in trace order, over the repaired memory store.
  Request a minimal, dependency-complete replay region that ends with the final answer.
- preserve_step_ids: steps kept as they are and visible to the replay.
- redundant_step_ids, suspicious_step_ids: steps dropped, and invalidated steps that are
  not regenerated.
Steps listed in none of replay/preserve are withheld from the replay context.
Rules: use only ids from valid_ids; replay, preserve and redundant must not overlap; delete
and quarantine must not overlap. Reply with one JSON object with exactly these keys:
delete_memory_ids, quarantine_memory_ids, invalidate_claim_ids, replay_step_ids,
preserve_step_ids, redundant_step_ids, suspicious_step_ids (lists of ids) and reason (text)."""


class JudgePlan(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    delete_memory_ids: list[str]
    quarantine_memory_ids: list[str]
    invalidate_claim_ids: list[str]
    replay_step_ids: list[str]
    preserve_step_ids: list[str]
    redundant_step_ids: list[str]
    suspicious_step_ids: list[str]
    reason: str


def compact_view(case: Case, faults: list[str]) -> dict[str, Any]:
    final = final_answer_step(case)
    return {
        "session": [{"input_id": u.input_id, "turn": u.turn, "content": u.content}
                    for u in case.session],
        "diagnosed_faulty_memory_ids": faults,
        "memories": [{"id": m.memory_id, "status": m.status.value, "source": m.source.value,
                      "content": m.content, "derived_from": m.derived_from,
                      "supersedes": m.supersedes} for m in case.memory_store],
        "trace": [{"id": s.step_id, "turn": s.turn, "type": s.step_type.value,
                   "content": s.content, "used_ids": s.used_ids,
                   "generated_memory_ids": s.generated_memory_ids,
                   "invalidated_memory_ids": s.invalidated_memory_ids} for s in case.trace],
        "wrong_final_answer": ({"step_id": final.step_id, "content": final.content}
                               if final else None),
        "valid_ids": {"memory_ids": [m.memory_id for m in case.memory_store],
                      "step_ids": [s.step_id for s in case.trace]},
        "output_schema": {**{f: "list of memory ids" for f in MEMORY_FIELDS},
                          **{f: "list of step ids" for f in STEP_FIELDS}, "reason": "text"},
    }


def messages(case: Case, faults: list[str]) -> list[dict[str, str]]:
    system = f"{DOMAIN_PROMPTS.get(case.domain, '')}\n\n{INSTRUCTIONS}".strip()
    return [{"role": "system", "content": system},
            {"role": "user", "content": json.dumps(compact_view(case, faults), ensure_ascii=False)}]


def validate(text: str, case: Case, faults: list[str]) -> JudgePlan:
    """The reply as a plan, or ValueError naming the first problem."""
    try:
        plan = JudgePlan.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON ({exc.msg})") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(f"malformed field {'.'.join(map(str, first['loc']))}: {first['msg']}") from exc
    steps = {s.step_id for s in case.trace}
    memories = {m.memory_id for m in case.memory_store}
    for name in (*MEMORY_FIELDS, *STEP_FIELDS):
        valid = memories if name in MEMORY_FIELDS else steps
        bad = [i for i in getattr(plan, name) if i not in valid]
        if bad:
            kind = "memory" if name in MEMORY_FIELDS else "step"
            raise ValueError(f"{name} holds ids that are not valid {kind} ids: {bad}")
    _check_overlaps(plan)
    missing = [f for f in faults if f not in plan.delete_memory_ids]
    if missing:
        raise ValueError(f"delete_memory_ids must contain every diagnosed faulty memory; missing {missing}")
    return plan


def _check_overlaps(plan: JudgePlan) -> None:
    pairs = [("replay_step_ids", "preserve_step_ids"), ("replay_step_ids", "redundant_step_ids"),
             ("preserve_step_ids", "redundant_step_ids"),
             ("delete_memory_ids", "quarantine_memory_ids")]
    for a, b in pairs:
        both = sorted(set(getattr(plan, a)) & set(getattr(plan, b)))
        if both:
            raise ValueError(f"{a} and {b} overlap: {both}")
