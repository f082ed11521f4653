"""Benchmark cases: read from a directory, one task copy per method, the slices they fall in.

Every `*.json` / `*.jsonl` file under the directory (recursively, sorted by path) is read
with the product's strict reader (loaders/case_files.py: duplicate keys, NaN, a truncated
file or a bad line are one-line errors naming file and line, never skipped); JSON that is not
a case (e.g. the manifest) and empty files are skipped; cases without an `evaluation` block
(they cannot be scored) and repeated task ids are skipped with a note.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from provrepair.benchmark.labels import benign_active
from provrepair.loaders.case_files import parse_located, read_json_records
from provrepair.provenance.ingest import content_hash
from provrepair.provenance.models import FORMAT, Case

STORE_BUCKETS = ((0, 5, "0–5"), (6, 8, "6–8"), (9, 11, "9–11"), (12, None, "≥12"))


@dataclass(frozen=True)
class BenchCase:
    path: Path
    raw: dict[str, Any]
    case: Case          # parsed, with its evaluation block
    digest: str         # content hash of the case (a changed case is a new pair)

    @property
    def task_id(self) -> str:
        return self.case.task_id


def load_cases(directory: Path) -> tuple[list[BenchCase], list[str]]:
    """The scorable cases, and notes on what was skipped."""
    cases: list[BenchCase] = []
    notes: list[str] = []
    files = sorted(p for p in directory.rglob("*") if p.suffix in (".json", ".jsonl"))
    for path in files:
        if path.stat().st_size == 0:
            continue
        for where, raw in read_json_records(path):
            if not isinstance(raw, dict) or raw.get("format") != FORMAT:
                continue
            if raw.get("evaluation") is None:
                notes.append(f"{path.name}: task {raw.get('task_id')!r} has no evaluation block; skipped")
                continue
            case = parse_located(raw, where)
            if any(c.task_id == case.task_id for c in cases):
                notes.append(f"{path.name}: task {case.task_id!r} already read from another file; "
                             "skipped")
                continue
            cases.append(BenchCase(path, raw, case, content_hash(case)))
    return cases, notes


def bench_task_id(task_id: str, method: str) -> str:
    return f"{task_id}::{method}"


def retask(raw: dict[str, Any], task_id: str) -> dict[str, Any]:
    """A deep copy of a raw case under another task id (every record's `task_id` too)."""
    out = copy.deepcopy(raw)
    out["task_id"] = task_id
    records = [*out["session"], *out["memory_store"], *out["trace"]]
    evaluation = out.get("evaluation") or {}
    records += [*evaluation.get("clean_trace", []), *evaluation.get("clean_memory_store", [])]
    for record in records:
        if isinstance(record, dict) and "task_id" in record:
            record["task_id"] = task_id
    return out


GRAPH_PREFIX = "provrepair_bench_"  # the benchmark's namespace; `bench clean` drops it


def graph_name(directory: Path, cases: list[BenchCase]) -> str:
    """`provrepair_bench_<hash>`: of the directory and every case's content, so a changed
    case set never meets tasks stored from another one."""
    text = "\n".join([str(directory.resolve()), *(f"{c.task_id}:{c.digest}" for c in cases)])
    return GRAPH_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:12]


def slices(case: Case) -> dict[str, Any]:
    """What the per-domain, per-fault-type and robustness tables group by."""
    assert case.evaluation is not None
    benign = benign_active(case)
    labelled = [m for m in case.memory_store if m.fault_type is not None]
    return {"domain": case.domain,
            "primary_fault_type": case.evaluation.primary_fault_type.value,
            "n_faults": len(labelled) or len(case.diagnosed_faults),
            "store_size": benign, "store_bucket": store_bucket(benign)}


def store_bucket(benign_active: int) -> str:
    for low, high, label in STORE_BUCKETS:
        if benign_active >= low and (high is None or benign_active <= high):
            return label
    return STORE_BUCKETS[0][2]
