"""`provrepair bench generate --seed S --out DIR`: the controlled benchmark of the paper.

150 cases in `provrepair.case/1`, produced by running the agent runtime (offline reasoner)
through multi-turn sessions in three domains, with faults injected from manifests and the
session re-run under them; distributed exactly as the paper's Table 1 (benchmark/
quotas.py). Writes one `<task_id>.json` per case and `manifest.json` (the distribution,
which the command prints). The same seed gives byte-identical files.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from provrepair.benchmark.build import build_case
from provrepair.benchmark.quotas import Slot, slots, subset
from provrepair.benchmark.summary import manifest
from provrepair.provenance.errors import InputError
from provrepair.provenance.models import Case
from provrepair.provenance.progress import NO_PROGRESS, Progress

MANIFEST = "manifest.json"
SET_NAME = "controlled"  # `bench generate|sweep --set controlled` (commands/bench.py)


def case_count(seed: int, limit: int | None) -> int:
    """How many cases `generate_cases(seed, limit=limit)` gives."""
    return len(subset(slots(seed), limit))


def generate_cases(seed: int, *, limit: int | None = None, fidelity: float = 1.0,
                   answerable: float = 0.0,
                   tick: Callable[[Slot], None] | None = None) -> list[Case]:
    """The benchmark's cases (all 150, or a stratified sample of `limit`), recorded at
    `fidelity` (benchmark/fidelity.py; 1.0 = exactly as run), a share `answerable` of
    them with a final question that can fall back to the conversation (docs/benchmark.md)."""
    check_fidelity(fidelity)
    check_share(answerable)
    cases = []
    for slot in subset(slots(seed), limit):
        cases.append(build_case(slot, seed, fidelity, answerable))
        if tick is not None:
            tick(slot)
    return cases


def dumps(data: Any) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def check_fidelity(fidelity: float) -> None:
    if not 0.0 < fidelity <= 1.0:
        raise InputError(f"fidelity {fidelity}: must be in (0, 1] (1.0 = recorded exactly)")


def check_share(answerable: float) -> None:
    if not 0.0 <= answerable <= 1.0:
        raise InputError(f"answerable share {answerable}: must be in [0, 1]")


def write_cases(cases: list[Case], out: Path, seed: int, fidelity: float = 1.0,
                answerable: float = 0.0) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    for case in cases:
        (out / f"{case.task_id}.json").write_text(dumps(case.model_dump(mode="json")),
                                                  encoding="utf-8")
    summary = manifest(cases, seed) | {"case_set": SET_NAME, "fidelity": fidelity,
                                       "answerable_share": answerable}
    (out / MANIFEST).write_text(dumps(summary), encoding="utf-8")
    return summary


def generate_benchmark(seed: int, out: Path, *, limit: int | None = None,
                       fidelity: float = 1.0, answerable: float = 0.0,
                       progress: Progress = NO_PROGRESS, tag: str = "") -> dict[str, Any]:
    """Generate, write and describe the cases (the manifest's summary is returned); `tag`
    names the sample in the progress bar (the sweep's fidelity and seed)."""
    check_fidelity(fidelity)
    check_share(answerable)
    progress.start(f"generating ({tag})" if tag else "generating", len(subset(slots(seed), limit)))
    cases = generate_cases(seed, limit=limit, fidelity=fidelity, answerable=answerable,
                           tick=lambda slot: progress.advance(1, slot.task_id))
    progress.finish()
    return write_cases(cases, out, seed, fidelity, answerable)
