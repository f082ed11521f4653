"""The paper's metrics (App. E; docs/method.md "Metrics"; docs/paper-notes.md §6), as
pure functions over a case WITH its evaluation block and what the repair left behind.

Per case (`case_metrics`), raw counts, so any slice aggregates them again:
- recovery: the final answer contains every `required_facts` entry, compared
  case-insensitively after collapsing white space; a method that declared failure (LLM-judge
  without a valid plan) is not recovered.
- faulty removal |F_c ∩ D_c| / |F_c|: F_c = the memories the case labels with a
  `fault_type` (the injected faulty records; the diagnosed faults when none is labelled);
  D_c = those the repair removed: not active afterwards, and either targeted by the plan
  (delete / quarantine) or active before (deactivated by the repair, e.g. retired by a
  replayed mutation). Mere absence is not credited.
- benign preservation |P_c| / |B_c|: B_c = `benign_memory_ids`; a benign record active at
  the start is preserved iff it, or a record that replaces it by the id-remapping chain
  (a regenerated record's `replaces` — REPLAYS — or `supersedes` — SUPERSEDES —,
  transitively; notes §9 A8), is active after repair; one inactive at the start is
  preserved iff the plan does not delete or quarantine it and the repair does not
  deactivate it further.
- claim invalidation: TP/FP/FN of I_c = `invalidate_claim_ids` ∩ the trace's `claim` steps
  against G_c = `gold_affected_claim_ids` (§9 A5).
- replay: R_c = original steps selected for replay and mapped to a committed replacement
  (steps cut off early, or never reached, are not), S_c = steps of the original trace.
- LLM calls and tokens: decision + replay (prompt + completion tokens, §9 A15); recurrence
  probes are not counted. Recurrence itself is probed by benchmark/probe.py (§9 A16).

Aggregation (`summarize`): recovery per case; recurrence over the decided probes of
recovered cases ("--": None when there are none); faulty removal, benign preservation,
claim-invalidation F1 and replay ratio micro-averaged (numerators and denominators summed
over cases first); LLM calls and tokens as means per case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from provrepair.provenance.models import Case, Evaluation
from provrepair.provenance.vocab import MemoryStatus, StepType

ACTIVE = MemoryStatus.ACTIVE.value
Ratio = tuple[int, int]


@dataclass(frozen=True)
class Outcome:
    """What one repair left behind, as the metrics read it."""

    answer: str | None
    delete: frozenset[str] = frozenset()           # plan.delete_memory_ids
    quarantine: frozenset[str] = frozenset()       # plan.quarantine_memory_ids
    invalidate: frozenset[str] = frozenset()       # plan.invalidate_claim_ids
    replay: frozenset[str] = frozenset()           # plan.replay_step_ids
    status_after: Mapping[str, str] = field(default_factory=dict)    # memory id → status
    successors: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # old → new ids
    replayed: Mapping[str, str] = field(default_factory=dict)        # old step → new step
    llm_calls: int = 0
    tokens: int = 0
    failed: bool = False


def norm(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def recovered(answer: str | None, required_facts: Iterable[str]) -> bool:
    return answer is not None and all(norm(f) in norm(answer) for f in required_facts)


def evaluation_of(case: Case) -> Evaluation:
    if case.evaluation is None:
        raise ValueError(f"case {case.task_id!r} has no evaluation block: it cannot be scored")
    return case.evaluation


def faulty_ids(case: Case) -> list[str]:
    labelled = [m.memory_id for m in case.memory_store if m.fault_type is not None]
    return labelled or list(case.diagnosed_faults)


def _status_before(case: Case) -> dict[str, str]:
    return {m.memory_id: m.status.value for m in case.memory_store}


def faulty_removal(case: Case, outcome: Outcome) -> Ratio:
    before = _status_before(case)
    targeted = outcome.delete | outcome.quarantine
    faults = faulty_ids(case)
    removed = [m for m in faults if outcome.status_after.get(m, before.get(m)) != ACTIVE
               and (m in targeted or before.get(m) == ACTIVE)]
    return len(removed), len(faults)


def _alive(memory_id: str, outcome: Outcome, seen: set[str]) -> bool:
    if memory_id in seen:
        return False
    seen.add(memory_id)
    if outcome.status_after.get(memory_id) == ACTIVE:
        return True
    return any(_alive(n, outcome, seen) for n in outcome.successors.get(memory_id, ()))


def benign_preservation(case: Case, outcome: Outcome) -> Ratio:
    before = _status_before(case)
    benign = [m for m in evaluation_of(case).benign_memory_ids if m in before]
    kept = 0
    for memory_id in benign:
        if before[memory_id] == ACTIVE:
            kept += _alive(memory_id, outcome, set())
        else:
            after = outcome.status_after.get(memory_id, before[memory_id])
            kept += (memory_id not in outcome.delete | outcome.quarantine
                     and after in (before[memory_id], ACTIVE))
    return kept, len(benign)


def claim_confusion(case: Case, outcome: Outcome) -> tuple[int, int, int]:
    claims = {s.step_id for s in case.trace if s.step_type is StepType.CLAIM}
    predicted = outcome.invalidate & claims
    gold = set(evaluation_of(case).gold_affected_claim_ids)
    return len(predicted & gold), len(predicted - gold), len(gold - predicted)


def replay_counts(case: Case, outcome: Outcome) -> Ratio:
    original = {s.step_id for s in case.trace}
    return len(set(outcome.replayed) & outcome.replay & original), len(original)


def case_metrics(case: Case, outcome: Outcome) -> dict[str, Any]:
    """The per-case numbers of one repair (recurrence is probed separately)."""
    removed, faults = faulty_removal(case, outcome)
    kept, benign = benign_preservation(case, outcome)
    tp, fp, fn = claim_confusion(case, outcome)
    replayed, steps = replay_counts(case, outcome)
    return {
        "recovered": not outcome.failed and recovered(outcome.answer,
                                                      evaluation_of(case).required_facts),
        "faulty_removed": removed, "faulty_total": faults,
        "benign_preserved": kept, "benign_total": benign,
        "claim_tp": tp, "claim_fp": fp, "claim_fn": fn,
        "replayed_original": replayed, "original_steps": steps,
        "llm_calls": outcome.llm_calls, "tokens": outcome.tokens,
    }


# -- aggregation ------------------------------------------------------------------------------

def micro(pairs: Iterable[Ratio]) -> float | None:
    num = den = 0
    for n, d in pairs:
        num, den = num + n, den + d
    return num / den if den else None


def f1(tp: int, fp: int, fn: int) -> float | None:
    den = 2 * tp + fp + fn
    return 2 * tp / den if den else None


def mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return sum(items) / len(items) if items else None


def recurrence(rows: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """(recurrences, decided probes) over the recovered cases."""
    probes = [r.get("recurred") for r in rows if r.get("recovered")]
    decided = [p for p in probes if p is not None]
    return sum(1 for p in decided if p), len(decided)


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Aggregate per-case rows (dicts with the keys of `case_metrics` plus `recurred`)."""
    recurred, decided = recurrence(rows)
    tp, fp, fn = (sum(r.get(k, 0) for r in rows) for k in ("claim_tp", "claim_fp", "claim_fn"))
    return {
        "n": len(rows),
        "recovery": mean(float(bool(r.get("recovered"))) for r in rows),
        "recovered": sum(1 for r in rows if r.get("recovered")),
        "recurrence": recurred / decided if decided else None,
        "recurrences": recurred, "probes": decided,
        "faulty_removal": micro((r.get("faulty_removed", 0), r.get("faulty_total", 0)) for r in rows),
        "benign_preservation": micro((r.get("benign_preserved", 0), r.get("benign_total", 0))
                                     for r in rows),
        "claim_f1": f1(tp, fp, fn),
        "replay_ratio": micro((r.get("replayed_original", 0), r.get("original_steps", 0))
                              for r in rows),
        "llm_calls": mean(r.get("llm_calls", 0) for r in rows),
        "tokens": mean(r.get("tokens", 0) for r in rows),
    }
