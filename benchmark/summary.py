"""What was generated, counted from the cases themselves: Table 1 (domain × primary fault
type), single/multi-fault cases, faulty-memory counts and store-size bins; as the
`manifest.json` written next to the cases and as the table the command prints."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from provrepair.benchmark.labels import benign_active
from provrepair.benchmark.quotas import BINS, DOMAINS, bin_of
from provrepair.provenance.models import Case
from provrepair.provenance.order import final_answer_step
from provrepair.provenance.vocab import FaultType

MANIFEST_FORMAT = "provrepair.bench-manifest/1"
SHORT = {FaultType.POISONED: "Pois.", FaultType.STALE: "Stale", FaultType.WRONG_USER: "W-user",
         FaultType.SUMMARY_DRIFT: "Drift"}
TITLES = {"shopping": "Shopping", "travel": "Travel", "customer_support": "Customer support"}


def fault_count(case: Case) -> int:
    return sum(1 for m in case.memory_store if m.fault_type is not None)


def primary(case: Case) -> FaultType:
    assert case.evaluation is not None
    return case.evaluation.primary_fault_type


def answerable(case: Case) -> bool:
    """The final question can fall back to the conversation (runtime.memory_first)."""
    final = final_answer_step(case)
    return final is not None and '"memory_first"' in json.dumps(final.derivation)


def entry(case: Case) -> dict[str, Any]:
    assert case.evaluation is not None
    return {"task_id": case.task_id, "file": f"{case.task_id}.json", "domain": case.domain,
            "primary_fault_type": primary(case).value, "n_faults": fault_count(case),
            "fault_types": [e.fault_type.value for e in case.evaluation.fault_manifest],
            "store_size": benign_active(case), "store_bin": bin_of(benign_active(case)),
            "turns": len(case.session), "steps": len(case.trace),
            "answerable": answerable(case)}


def manifest(cases: list[Case], seed: int) -> dict[str, Any]:
    table = {d: {k.value: sum(1 for c in cases if c.domain == d and primary(c) is k)
                 for k in FaultType} for d in DOMAINS}
    counts = Counter(fault_count(c) for c in cases)
    return {
        "format": MANIFEST_FORMAT, "seed": seed, "cases": len(cases),
        "table1": {d: {**row, "total": sum(row.values())} for d, row in table.items()},
        "primary_fault_types": {k.value: sum(1 for c in cases if primary(c) is k)
                                for k in FaultType},
        "single_fault": counts[1], "multi_fault": len(cases) - counts[1],
        "faulty_memories": {str(n): counts[n] for n in sorted(counts)},
        "multi_fault_by_domain": {d: sum(1 for c in cases if c.domain == d and
                                         fault_count(c) > 1) for d in DOMAINS},
        "store_size_bins": {name: sum(1 for c in cases if bin_of(benign_active(c)) == name)
                            for name, *_ in BINS},
        "answerable_cases": sum(1 for c in cases if answerable(c)),
        "files": [entry(c) for c in cases],
    }


def table(summary: dict[str, Any]) -> str:
    """Table 1 as the paper prints it, then the fault multiplicity and store-size slices."""
    kinds = list(FaultType)
    head = f"{'Domain':<18}" + "".join(f"{SHORT[k]:>8}" for k in kinds) + f"{'Total':>8}"
    lines = [head, "-" * len(head)]
    for domain in DOMAINS:
        row = summary["table1"][domain]
        lines.append(f"{TITLES[domain]:<18}" + "".join(f"{row[k.value]:>8}" for k in kinds) +
                     f"{row['total']:>8}")
    totals = summary["primary_fault_types"]
    lines.append(f"{'Total':<18}" + "".join(f"{totals[k.value]:>8}" for k in kinds) +
                 f"{summary['cases']:>8}")
    multi = ", ".join(f"{n} {TITLES[d].lower()}" for d, n in summary["multi_fault_by_domain"].items())
    faults = ", ".join(f"{n}: {c}" for n, c in summary["faulty_memories"].items())
    bins = ", ".join(f"{name}: {c}" for name, c in summary["store_size_bins"].items())
    lines += ["", f"Single-fault {summary['single_fault']}, multi-fault {summary['multi_fault']} "
              f"({multi})", f"Faulty memories per case: {faults}",
              f"Benign active records (store size): {bins}"]
    return "\n".join(lines)
