"""One case × one method: ingest a fresh task copy (replacing any earlier copy and its
runs), repair it through the product's service (`repair_task`: plan, shared executor,
crash-safe write-back), read the repaired store back from the graph, score it and probe
recurrence. Returns the JSON line of the pair.

Only this module (the benchmark) reads the case's evaluation block; the method sees the
stored task without it (oracle-assisted methods excepted, and flagged in the line).
"""

from __future__ import annotations

import time
from typing import Any

from provrepair.benchmark.cases import BenchCase, bench_task_id, retask, slices
from provrepair.benchmark.lookalikes import sibling_case
from provrepair.benchmark.metrics import Outcome, case_metrics, sweep_scores
from provrepair.benchmark.noise import NoisyReasoner
from provrepair.benchmark.probe import fact_recurrence, recurrence_probe
from provrepair.provenance.errors import StoreUnavailable
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.keys import task_key
from provrepair.provenance.models import MemoryRecord
from provrepair.provenance.rows import record_from_props
from provrepair.provenance.state.runs import APPLIED_REPORT, visible_node
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from provrepair.provenance.vocab import MemoryStatus, StepType
from provrepair.repair.methods import get_method
from provrepair.repair.methods.base import Decision, MethodNotRun
from provrepair.repair.plan.scope import namespace_copies
from provrepair.repair.reasoners.base import Reasoner
from provrepair.repair.service import RepairReport, repair_task

REPAIR_ONLY_PROPS = ("origin_run", "replaces")
# The method whose echo sweep is scored against the case's look-alikes (lookalikes.py): it
# acts on the sweep, so its benign preservation pays for the sweep's false reports.
SWEEP_METHOD = "dependency_guided_echo"


def run_pair(store: GraphStore, item: BenchCase, method: str, reasoner: Reasoner) -> dict[str, Any]:
    started = time.perf_counter()
    line = _header(item, method, reasoner)
    task_id = bench_task_id(item.task_id, method)
    # replay noise (noise.py) at repair time only; the probes ask the noise-free reasoner
    repairer, prober = ((reasoner.for_case(item.task_id), reasoner.inner)
                        if isinstance(reasoner, NoisyReasoner) else (reasoner, reasoner))
    try:
        # replace: a fresh copy every time, without runs left by an interrupted earlier try
        raw = retask(item.raw, task_id)
        if method == SWEEP_METHOD:  # its own memory namespace, shared with a sibling
            raw["memory_namespace"] = task_id
            ingest_sibling(store, item, task_id)
        ingest_case(store, parse_case(raw), replace=True)
        sweep = namespace_sweep(store, item, task_id) if method == SWEEP_METHOD else None
        report = repair_task(store, task_id, repairer, method=method)
    except MethodNotRun as exc:
        return {**line, "status": "not_run", "reason": str(exc)}
    except StoreUnavailable:
        raise  # not the method's failure: stop the run (a rerun resumes)
    except Exception as exc:  # a method that crashes on a case fails that case, reported
        return {**line, "status": "error", "reason": f"{type(exc).__name__}: {exc}",
                "recovered": False}
    scored = _score(store, item, task_id, report, Decision(**report.decision), prober)
    if sweep is not None:
        flagged = {*sweep, *(report.plan or {}).get("suspected_copies", {})}
        scored["sweep"] = sweep_scores(item.case, flagged)
    return {**line, **scored, "seconds": round(time.perf_counter() - started, 4)}


def sibling_task_id(task_id: str) -> str:
    """`<case>~namespace::<method>`: still a benchmark task to `bench clean`."""
    case, _, method = task_id.rpartition("::")
    return f"{case}~namespace::{method}"


def ingest_sibling(store: GraphStore, item: BenchCase, task_id: str) -> None:
    """The other conversation of the pair's memory namespace (lookalikes.sibling_case)."""
    sibling = sibling_case(item.case, sibling_task_id(task_id))
    if sibling is not None:
        ingest_case(store, sibling.model_copy(update={"memory_namespace": task_id}),
                    replace=True)


def namespace_sweep(store: GraphStore, item: BenchCase, task_id: str) -> set[str]:
    """The ids the echo sweep reports in the sibling conversation (`--scope namespace`)."""
    copies = namespace_copies(store, task_id, list(item.case.diagnosed_faults), task_id)
    return {c.memory_id for c in copies}


def _score(store: GraphStore, item: BenchCase, task_id: str, report: RepairReport,
           decision: Decision, reasoner: Reasoner) -> dict[str, Any]:
    memories, successors = repaired_store(store, task_id)
    outcome = _outcome(report, decision, memories, successors)
    scores = case_metrics(item.case, outcome)
    assert item.case.evaluation is not None
    recurred, probe = (combined(recurrence_probe(item.case, memories, successors, reasoner,
                                                 item.case.evaluation.required_facts),
                                fact_recurrence(item.case, memories))
                       if scores["recovered"] else (None, "not_recovered"))
    return {"status": report.status, "answer": report.answer, "unresolved": report.unresolved,
            "needs_human": report.needs_human, **scores,
            "recurred": recurred, "probe": probe, "decision_llm_calls": decision.llm_calls,
            "decision_failed": decision.failed, "notes": decision.notes,
            "reasoner_calls": _regenerations(item, outcome) + decision.regenerations}


def combined(question: tuple[bool | None, str],
             facts: tuple[bool | None, str]) -> tuple[bool | None, str]:
    """A case recurs if the re-asked question fails or a fact probe gets the fault back;
    undecided only when neither probe decides."""
    decided = [p for p in (question, facts) if p[0] is not None]
    if not decided:
        return None, question[1]
    failed = [p for p in decided if p[0]]
    return (True, "; ".join(p[1] for p in failed)) if failed else (False, "ok")


def _header(item: BenchCase, method: str, reasoner: Reasoner) -> dict[str, Any]:
    return {"case": item.task_id, "file": item.path.name, "digest": item.digest,
            "method": method, "reasoner": getattr(reasoner, "name", "?"),
            "model": getattr(reasoner, "model", None),
            "replay_noise": reasoner.rate if isinstance(reasoner, NoisyReasoner) else 0.0,
            "oracle_assisted": get_method(method).oracle_assisted,
            **slices(item.case)}


def repaired_store(store: GraphStore, task_id: str) -> tuple[list[MemoryRecord],
                                                              dict[str, tuple[str, ...]]]:
    """Every committed memory of the task after repair, and old id → the records written by
    the repair that replace it (`replaces`: REPLAYS; `supersedes`: SUPERSEDES)."""
    memories: list[MemoryRecord] = []
    successors: dict[str, list[str]] = {}
    for row in store.run("list_task_nodes", {"task_key": task_key(task_id)}):
        props = row["props"]
        if props["kind"] != "memory" or not visible_node(props):
            continue
        record = record_from_props({k: v for k, v in props.items() if k not in REPAIR_ONLY_PROPS})
        assert isinstance(record, MemoryRecord)
        memories.append(record)
        if "origin_run" in props:
            for old in {props.get("replaces"), record.supersedes} - {None}:
                successors.setdefault(str(old), []).append(record.memory_id)
    return memories, {k: tuple(v) for k, v in successors.items()}


def _outcome(report: RepairReport, decision: Decision, memories: list[MemoryRecord],
             successors: dict[str, tuple[str, ...]]) -> Outcome:
    plan = report.plan or {}
    applied = report.status in APPLIED_REPORT
    counts = report.counts or {}
    return Outcome(
        answer=report.answer, delete=frozenset(plan.get("delete_memory_ids", [])),
        quarantine=frozenset(plan.get("quarantine_memory_ids", [])),
        invalidate=frozenset(plan.get("invalidate_claim_ids", [])),
        replay=frozenset(plan.get("replay_step_ids", [])),
        status_after={m.memory_id: m.status.value for m in memories},
        facts_after={m.memory_id: (m.entity_id, m.fact_key, m.fact_value) for m in memories
                     if m.status is MemoryStatus.ACTIVE and m.entity_id and m.fact_key
                     and m.fact_value is not None},
        successors=successors, replayed=dict(report.replayed) if applied else {},
        llm_calls=counts.get("llm_calls", 0) + decision.llm_calls,
        tokens=counts.get("tokens", 0) + decision.tokens, failed=decision.failed)


def _regenerations(item: BenchCase, outcome: Outcome) -> int:
    """Replayed original steps that went to the reasoner (memory reads re-run retrieval)."""
    kinds = {s.step_id: s.step_type for s in item.case.trace}
    return sum(1 for s in set(outcome.replayed) & outcome.replay
               if kinds.get(s) not in (None, StepType.MEMORY_READ))
