"""The transfer set as a case set of `bench generate|sweep --set transfer` (what
benchmark/sweep.py `CaseSet` asks of a set, as benchmark/generate.py gives it for the
controlled one).

    generate_benchmark(seed, out, fidelity=, answerable=, limit=)
        the committed source lines (cases/source.jsonl) → build.build_transfer → out/
        (case files and manifest.json, "case_set": "transfer")

The trajectories are fixed (the 50 the selection keeps, like the paper's 50-case subset);
the seed draws what the controlled generator's seed draws: which notes are poisoned and
with which wrong value, which case gets which fault count, the recording errors at
`fidelity` and which final questions are answerable. At the committed settings (`DEFAULTS`:
seed 42, fidelity 0.8, answerable share 0.5) it writes the committed cases byte for byte;
that is also the paper's Table 3 setting a transfer sweep runs by default (one level,
three seeds, replay noise 0 and 0.05), with the Table 3 form beside the paper's numbers
(`paper_tables`, benchmark/transfer/table3.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from provrepair.benchmark.generate import check_fidelity, check_share
from provrepair.benchmark.transfer.build import (
    ANSWERABLE,
    COUNT,
    FIDELITY,
    SET_NAME,
    SOURCE_FILE,
    Settings,
    build_transfer,
    write_transfer,
)
from provrepair.benchmark.transfer.table3 import paper_tables
from provrepair.benchmark.transfer.tau2 import read_rows
from provrepair.provenance.progress import NO_PROGRESS, Progress

# The options a user leaves out of `bench generate|sweep --set transfer` (commands/bench.py):
# the committed cases' recording, and that one level for a sweep (as the option is written).
DEFAULTS: dict[str, Any] = {"fidelity": FIDELITY, "answerable": ANSWERABLE, "levels": str(FIDELITY)}


def case_count(seed: int, limit: int | None) -> int:
    """How many cases `generate_benchmark(seed, limit=limit)` writes (the seed changes none)."""
    return COUNT if limit is None else min(limit, COUNT)


def generate_benchmark(seed: int, out: Path, *, limit: int | None = None,
                       fidelity: float = FIDELITY, answerable: float = ANSWERABLE,
                       progress: Progress = NO_PROGRESS, tag: str = "") -> dict[str, Any]:
    """Build the set (or a sample of `limit` cases by fault count) from the committed source
    lines, write it to `out` and return its manifest; `tag` names it in the progress bar."""
    check_fidelity(fidelity)
    check_share(answerable)
    progress.start(f"transfer cases{f' ({tag})' if tag else ''}", case_count(seed, limit))
    cases, summary = build_transfer(read_rows(SOURCE_FILE), Settings(seed, fidelity, answerable),
                                    limit=limit, tick=lambda cid: progress.advance(1, cid))
    progress.finish()
    write_transfer(cases, summary, out)
    return summary


def summary_table(manifest: dict[str, Any]) -> str:
    """What `bench generate --set transfer` prints: the source, the settings and the fault
    multiplicity of the cases written."""
    src = manifest["source"]
    spread = ", ".join(f"{n} with {k}" for k, n in manifest["fault_multiplicity"].items())
    return (f"Transfer set: {manifest['cases']} cases from {src['repository']} @ "
            f"{src['commit'][:12]} ({src['license']}), seed {manifest['seed']}, fidelity "
            f"{manifest['fidelity']}, answerable share {manifest['answerable_share']}\n"
            f"poisoned records per case: {spread}")


__all__ = ["DEFAULTS", "SET_NAME", "case_count", "generate_benchmark", "paper_tables",
           "summary_table"]
