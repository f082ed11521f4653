"""The namespace benchmark (issue 37): a user's history of sessions over one memory
(benchmark/namespace_cases.py `user_history`), a record planted in one session, later sessions
reading it or notes derived from it; four ways to repair it, scored against the same history
without the fault.

Methods:
- `namespace`: ours across the memory (`repair --namespace`, repair/namespace_repair.py);
  reported: the plan's affected answers.
- `per_conversation`: today's repair of the session holding the fault (`repair --task`);
  reported: that session, if its answer was invalidated.
- `value_sweep`: that repair with the echo sweep over the namespace (`--scope namespace
  --quarantine-copies`, repair/scope_sweep.py); reported: that session and every session it
  swept a copy in.
- `store_reset`: every record of the memory deleted; reported: every session.

Metrics, per history: recall and precision of the sessions reported as affected against those
whose answer the fault changed (`UserHistory.affected`); whether the latest session's answer is
the clean one after the repair (a session no method replayed keeps the answer it gave; after a
reset a session that asked the memory has nothing to answer from, so only a session that told
a fact itself recovers); benign preservation (records the fault did not touch, still in the
store after the repair's patch); contaminated records fixed (each record whose content the
fault changed, or the fault itself, ends as in the clean history: removed when it has no
clean version); replayed steps; wall time.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from provrepair.benchmark.namespace_cases import UserHistory, user_history
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.namespace_patch import namespace_patch
from provrepair.repair.namespace_repair import repair_namespace
from provrepair.repair.patch import AddOp, MemoryPatch, PutOp, RestoreOp, memory_patch
from provrepair.repair.plan.namespace import plan_namespace
from provrepair.repair.reasoners import make_reasoner
from provrepair.repair.service import run_repair

METHODS = ("namespace", "per_conversation", "value_sweep", "store_reset")


@dataclass
class Score:
    sessions: int
    seed: int
    method: str
    gold: int
    reported: int
    recall: float
    precision: float
    latest_recovered: bool
    benign_preserved: float
    contaminated_fixed: float
    replayed_steps: int
    seconds: float


def histories(sizes: list[int], seeds: list[int]) -> list[tuple[int, int, int]]:
    """(sessions, seed, fault session): the fault planted after the first facts were told,
    in the first half of the history so later sessions can read it."""
    return [(n, seed, max(2, min(n - 2, 2 + seed % max(1, n // 2)))) for n in sizes
            for seed in seeds]


def score(store: GraphStore, sessions: int, seed: int, fault_session: int,
          method: str) -> Score:
    """Store a fresh copy of the history (its own namespace and task ids), repair it with
    `method`, and score the outcome."""
    tag = f"ns{sessions}-{seed}-{method}"
    history = user_history(sessions, fault_session, seed=seed, namespace=tag, prefix=tag)
    for case in history.cases:
        ingest_case(store, case)
    start = time.perf_counter()
    reported, answers, patches, replayed = _repair(store, history, tag, method)
    seconds = time.perf_counter() - start
    latest = history.cases[-1].task_id
    given = history.given_answers[latest]
    if method == "store_reset":
        recovered = given.startswith("Noted:")  # answered from what the user said in it
    else:
        recovered = answers.get(latest, given) == history.clean_answers[latest]
    final = _apply(history.records, patches) if method != "store_reset" else {}
    gold = set(history.affected)
    hits = len(gold & reported)
    benign = [a for a, c in history.records.items() if history.clean_records.get(a) == c]
    touched = [a for a, c in history.records.items() if history.clean_records.get(a) != c]
    return Score(
        sessions=sessions, seed=seed, method=method, gold=len(gold), reported=len(reported),
        recall=hits / len(gold) if gold else 1.0,
        precision=hits / len(reported) if reported else 1.0, latest_recovered=recovered,
        benign_preserved=sum(a in final for a in benign) / len(benign) if benign else 1.0,
        contaminated_fixed=(sum(_fixed(a, history, final) for a in touched) / len(touched)
                            if touched else 1.0),
        replayed_steps=replayed, seconds=seconds)


def _fixed(agent: str, history: UserHistory, final: dict[str, str]) -> bool:
    clean = history.clean_records.get(agent)
    if clean is None:
        return agent not in final
    return final.get(agent) == clean or (agent not in final and clean in final.values())


def _repair(store: GraphStore, history: UserHistory, namespace: str, method: str
            ) -> tuple[set[str], dict[str, str | None], list[MemoryPatch], int]:
    """(sessions reported affected, corrected answers by session, patches, replayed steps)."""
    offline = make_reasoner("offline", None)
    if method == "namespace":
        plan, _ = plan_namespace(store, namespace, [history.fault])
        repaired = repair_namespace(store, namespace, [history.fault], offline)
        replayed = sum(c.replayed_steps for c in repaired.conversations)
        return ({a.task_id for a in plan.affected_answers},
                {c.task_id: c.corrected_answer for c in repaired.conversations},
                [namespace_patch(store, namespace)], replayed)
    if method == "store_reset":
        return {c.task_id for c in history.cases}, {}, [], 0
    task = history.fault_session
    sweep = method == "value_sweep"
    report = run_repair(store, task, faults=[history.fault], quarantine_copies=sweep,
                        scope="namespace" if sweep else "task")
    reported = {task} if history.given_answers[task] != report.answer else set()
    reported |= {c["task_id"] for c in report.namespace_quarantined}
    patches = [memory_patch(store, t) for t in sorted({task} | {
        c["task_id"] for c in report.namespace_quarantined})]
    return reported, {task: report.answer}, patches, report.counts.get("replayed_steps", 0)


def _apply(records: dict[str, str], patches: list[MemoryPatch]) -> dict[str, str]:
    """The agent's store (agent id → content) after the patches."""
    store = dict(records)
    for patch in patches:
        for op in patch.operations:
            if isinstance(op, PutOp | AddOp):
                store[op.memory_id] = op.content
            elif isinstance(op, RestoreOp):
                store[op.memory_id] = op.expected_content
            else:  # delete, quarantine: out of what the agent reads
                store.pop(op.memory_id, None)
    return store


def summary(scores: list[Score]) -> list[dict[str, Any]]:
    """Mean of each metric per method (and per history size)."""
    rows = []
    for sessions in sorted({s.sessions for s in scores}):
        for method in METHODS:
            mine = [s for s in scores if s.method == method and s.sessions == sessions]
            if not mine:
                continue
            n = len(mine)
            rows.append({"sessions": sessions, "method": method, "histories": n,
                         "recall": sum(s.recall for s in mine) / n,
                         "precision": sum(s.precision for s in mine) / n,
                         "latest_recovered": sum(s.latest_recovered for s in mine) / n,
                         "benign_preserved": sum(s.benign_preserved for s in mine) / n,
                         "contaminated_fixed": sum(s.contaminated_fixed for s in mine) / n,
                         "replayed_steps": sum(s.replayed_steps for s in mine) / n,
                         "seconds": sum(s.seconds for s in mine) / n})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| sessions | method | histories | recall | precision | latest answer recovered | "
            "benign kept | contaminated fixed | replayed steps | s |")
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        lines.append(f"| {r['sessions']} | {r['method']} | {r['histories']} | {r['recall']:.2f} "
                     f"| {r['precision']:.2f} | {r['latest_recovered']:.2f} | "
                     f"{r['benign_preserved']:.2f} | {r['contaminated_fixed']:.2f} | "
                     f"{r['replayed_steps']:.1f} | {r['seconds']:.2f} |")
    return "\n".join(lines)


def as_dicts(scores: list[Score]) -> list[dict[str, Any]]:
    return [asdict(s) for s in scores]
