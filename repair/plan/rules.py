"""The rules of the paper's appendix table "Rule-Guided Rollback Decisions", one function per
rule, named after it; the spec's realisation (docs/method.md §4) in each docstring.
Rules 6 and 7 override rule 3: a supported seed or final answer is still replayed. Rule 8 is
ours, beyond the paper (issue 31).
"""

from __future__ import annotations

from collections.abc import Iterable

from provrepair.provenance.vocab import MemoryStatus
from provrepair.repair.plan.graph import Node


def delete_diagnosed_faulty_memory(faults: Iterable[Node]) -> set[str]:
    """Rule 1. Diagnosed faulty memory → delete it from the active store: M_del = F."""
    return {m.uid for m in faults}


def quarantine_unsupported_affected_memory(unsupported: Iterable[Node], deleted: set[str]) -> set[str]:
    """Rule 2. Unsupported affected memory → quarantine, out of retrieval:
    M_quar = (A ∩ V_mem ∩ active) \\ F (records already inactive keep their status)."""
    return {v.uid for v in unsupported
            if v.is_memory and v.status == MemoryStatus.ACTIVE and v.uid not in deleted}


def preserve_independently_supported_candidate(affected: Iterable[Node],
                                               supported: set[str]) -> list[Node]:
    """Rule 3. Candidate with independent support → keep its output (and the actions and
    observations inheriting its verdict): A = A0 \\ P_sup; returns A."""
    return [v for v in affected if v.uid not in supported]


def replay_unsupported_answer_relevant_node(answer_relevant: set[str]) -> set[str]:
    """Rule 4. Unsupported answer-relevant execution node → invalidate and replay:
    A_ans ⊆ V_replay (an observation is replayed through its generating action)."""
    return set(answer_relevant)


def invalidate_unsupported_non_answer_relevant_node(invalidated: set[str], replayed: set[str],
                                                    refreshed: set[str]) -> set[str]:
    """Rule 5. Unsupported non-answer-relevant execution node → invalidate without replay,
    excluded from later context: suspicious = V_inv \\ (V_replay ∪ refreshed observations)."""
    return invalidated - replayed - refreshed


def replay_faulty_memory_provenance_seed(seeds: Iterable[Node]) -> set[str]:
    """Rule 6. A provenance seed → replay the step that produced the faulty memory (or the
    failed lifecycle step): S_seed = {r(m) | r(m) is a step}, even when supported."""
    return {s.uid for s in seeds if s.is_step}


def regenerate_final_answer(final: Node | None) -> set[str]:
    """Rule 7. Final-answer node → always regenerate it: v_final ∈ V_replay."""
    return {final.uid} if final is not None else set()


def rewrite_quarantined_memory(producers: Iterable[Node]) -> set[str]:
    """Rule 8 (beyond the paper). Quarantined record → replay the step that wrote it, so the
    record is rewritten from the repaired context instead of only withdrawn; `producers` are
    the steps with a PRODUCE edge into a quarantined record.

    The paper replays a quarantined record's producer only when a replayed step is recorded
    reading it (ExecClosure passes through removed records) and the producer is invalidated.
    Both lean on the recording being complete. A final answer that lost its citation of the
    record (the recorder dropped it), or a producer the support check preserved while its
    record, lacking a recorded `derived_from`, could not be checked and was quarantined, leave
    the record withdrawn and never rewritten: what it held (a clean value beside the fault's)
    is gone from the repaired store, and an answer that needed it comes out unresolved.
    Replaying more never keeps anything the paper's plan removes, so this costs replay only.
    """
    return {p.uid for p in producers if p.is_step}
