"""Does a run read back from a trace miss contamination? Native plan against read-back plan,
every memory record as the single fault (issue 28; loaders/trace_export.py makes the traces;
tests/integration/test_trace_soundness.py, bench/trace_soundness.py). Both plans come from
the reference planner (benchmark/reference.py); ids map through the read-back case's
`world["provrepair.sources"]` and the origins the export recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

from provrepair.benchmark.reference import plan_in_memory
from provrepair.provenance.models import Case


@dataclass
class FaultCheck:
    """One memory record of a native case taken as the single fault."""

    fault: str
    missed: list[str]            # natively affected nodes the ingested plan leaves alone
    native: tuple[int, int, int]  # affected, replayed, quarantined
    ingested: tuple[int, int, int]
    present: bool = True  # the read-back run has the record (the run showed or wrote it)


def id_map(native: Case, ingested: Case, origin: dict[str, str]) -> dict[str, str]:
    """Native id → ingested id: steps through their origin, user turns by content (first
    unused), records by id."""
    by_source = {source: our for our, source in
                 ingested.world.get("provrepair.sources", {}).items() if source}
    out = {native_id: by_source[key] for native_id, key in origin.items() if key in by_source}
    unused = [u for u in ingested.session]
    for u in native.session:
        match = next((x for x in unused if x.content == u.content), None)
        if match is not None:
            unused.remove(match)
            out[u.input_id] = match.input_id
    ingested_records = {m.memory_id for m in ingested.memory_store}
    out.update({m.memory_id: m.memory_id for m in native.memory_store
                if m.memory_id in ingested_records})
    return out


def check_faults(native: Case, ingested: Case, origin: dict[str, str]) -> list[FaultCheck]:
    mapping = id_map(native, ingested, origin)
    ingested_records = {m.memory_id for m in ingested.memory_store}
    checks = []
    for record in native.memory_store:
        m = record.memory_id
        want = plan_in_memory(native, [m])
        sizes = (len(want["affected_ids"]), len(want["replay_step_ids"]),
                 len(want["quarantine_memory_ids"]))
        if m not in ingested_records:  # the run never showed it: nothing may depend on it
            checks.append(FaultCheck(m, [x for x in want["affected_ids"] if x != m], sizes,
                                     (0, 0, 0), present=False))
            continue
        got = plan_in_memory(ingested, [m])
        affected = set(got["affected_ids"])
        missed = [x for x in want["affected_ids"] if mapping.get(x) not in affected]
        checks.append(FaultCheck(m, missed, sizes, (
            len(got["affected_ids"]), len(got["replay_step_ids"]),
            len(got["quarantine_memory_ids"]))))
    return checks
