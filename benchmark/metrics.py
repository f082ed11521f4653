"""The paper's metrics (App. E; docs/method.md "Metrics"; docs/paper-notes.md §6), as
pure functions over a case WITH its evaluation block and what the repair left behind.

Per case (`case_metrics`), raw counts, so any slice aggregates them again:
- recovery (the paper's): the final answer contains every `required_facts` entry, compared
  case-insensitively after collapsing white space, and states none of the case's wrong
  values (`wrong_facts`: what a fault states that no active record of the clean run holds,
  less what the clean answer itself says; read normalised and bounded, repair/plan/
  values.py, outside the required facts' own text); a method that declared failure
  (LLM-judge without a valid plan) is not recovered. Before issue 39 an answer carrying
  both the wrong and the right fact counted as recovered.
- state recovery (issue 39, beyond the paper): recovered, and the repaired active store
  asserts no wrong value for the case's facts (`state_errors`): no active record states,
  for an entity and key the clean run's active store holds, a value it does not hold, nor a
  fault's wrong fact. A repair whose replay wrote a wrong value into a rewritten record
  (replay noise), or that left a copy of the fault active, is recovered but not state
  recovered.
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

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from provrepair.benchmark.lookalikes import labelled, sibling_case
from provrepair.provenance.models import Case, Evaluation, MemoryRecord
from provrepair.provenance.vocab import MemoryStatus, StepType
from provrepair.repair.plan.echo import Stated, asserted
from provrepair.repair.plan.values import normalize, states, without

ACTIVE = MemoryStatus.ACTIVE.value
Ratio = tuple[int, int]
Fact = tuple[str, str, str]  # (entity_id, fact_key, fact_value)


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
    facts_after: Mapping[str, Fact] = field(default_factory=dict)  # active record → its fact
    replayed: Mapping[str, str] = field(default_factory=dict)        # old step → new step
    llm_calls: int = 0
    tokens: int = 0
    failed: bool = False


def norm(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def recovered(answer: str | None, required_facts: Iterable[str],
              wrong_values: Iterable[str] = ()) -> bool:
    """Every required fact in the answer, and no wrong value outside them."""
    required = list(required_facts)
    if answer is None or not all(norm(f) in norm(answer) for f in required):
        return False
    rest = without(answer, required)
    return not any(states(rest, value) for value in wrong_values)


def wrong_facts(case: Case) -> list[Fact]:
    """(entity, key, value) of each fault stating a fact that no active record of the clean
    run holds (the fact probes ask these; probe.py)."""
    clean = {(m.entity_id, m.fact_key, normalize(m.fact_value))
             for m in evaluation_of(case).clean_memory_store if m.status is MemoryStatus.ACTIVE}
    faults = set(case.diagnosed_faults)
    return [(m.entity_id, m.fact_key, m.fact_value) for m in case.memory_store
            if m.memory_id in faults and m.entity_id and m.fact_key and m.fact_value is not None
            and (m.entity_id, m.fact_key, normalize(m.fact_value)) not in clean]


def wrong_answer_values(case: Case) -> list[str]:
    """The wrong values an answer must not state: those the clean answer does not."""
    expected = evaluation_of(case).expected_answer
    return sorted({v for _, _, v in wrong_facts(case) if not states(expected, v)})


def state_errors(case: Case, outcome: Outcome) -> list[str]:
    """Active records after repair that assert a wrong value for the case's facts."""
    clean: dict[tuple[str, str], set[str]] = {}
    for m in evaluation_of(case).clean_memory_store:
        if m.status is MemoryStatus.ACTIVE and m.entity_id and m.fact_key and \
                m.fact_value is not None:
            clean.setdefault((m.entity_id, m.fact_key), set()).add(normalize(m.fact_value))
    wrong = {(e, k, normalize(v)) for e, k, v in wrong_facts(case)}
    return sorted(i for i, (e, k, v) in outcome.facts_after.items()
                  if (e, k, normalize(v)) in wrong
                  or ((e, k) in clean and normalize(v) not in clean[(e, k)]))


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
    answer_ok = not outcome.failed and recovered(outcome.answer, evaluation_of(case).required_facts,
                                                 wrong_answer_values(case))
    errors = state_errors(case, outcome)
    return {
        "recovered": answer_ok, "state_recovered": answer_ok and not errors,
        "state_errors": errors,
        "faulty_removed": removed, "faulty_total": faults,
        "benign_preserved": kept, "benign_total": benign,
        "claim_tp": tp, "claim_fp": fp, "claim_fn": fn,
        "replayed_original": replayed, "original_steps": steps,
        "llm_calls": outcome.llm_calls, "tokens": outcome.tokens,
    }


SWEEP_COUNTS = ("reported", "value_match", "issue31_rule", "records")


def sweep_scores(case: Case, flagged: Collection[str]) -> dict[str, dict[str, int]]:
    """The echo sweep against the case's labelled copies and look-alikes (lookalikes.py):
    kind → {reported: by the sweep; value_match: asserting a fault's value (the sweep's
    match alone, before its independence check); issue31_rule: matched by the rule before
    issue 39 (`issue31_match`); records: of the kind}. `flagged`: the ids the sweep
    reported, in the task and in the sibling conversation of its namespace."""
    kinds = labelled(case)
    faults = [_stated(m) for m in case.memory_store if m.memory_id in set(case.diagnosed_faults)]
    sibling = sibling_case(case, case.task_id)
    records = {m.memory_id: _stated(m)
               for m in [*case.memory_store, *(sibling.memory_store if sibling else [])]}
    out: dict[str, dict[str, int]] = {}
    for memory_id, kind in kinds.items():
        record = records[memory_id]
        row = out.setdefault(kind, dict.fromkeys(SWEEP_COUNTS, 0))
        row["reported"] += memory_id in flagged
        row["value_match"] += any(asserted(record, f) for f in faults)
        row["issue31_rule"] += any(issue31_match(record, f) for f in faults)
        row["records"] += 1
    return out


def issue31_match(record: Stated, fault: Stated) -> bool:
    """The sweep's rule before issue 39, kept to measure against: the same entity, key and
    value character for character, or — for a fault with no fact — its content anywhere
    inside the record's, as a raw substring."""
    if fault.fact_value is not None:
        return (record.entity_id, record.fact_key, record.fact_value) == \
            (fault.entity_id, fault.fact_key, fault.fact_value)
    return bool(fault.content) and (fault.content or "") in (record.content or "")


def _stated(m: MemoryRecord) -> Stated:
    return Stated(m.memory_id, m.memory_id, m.content, m.entity_id, m.fact_key, m.fact_value)


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
        "state_recovery": mean(float(bool(r.get("state_recovered"))) for r in rows),
        "state_recovered": sum(1 for r in rows if r.get("state_recovered")),
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
