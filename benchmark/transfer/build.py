"""Building the transfer set: τ²-bench retail trajectories → poisoned multi-fault cases.

    source rows (tau2.py) → the trajectories the task reward marks solved (1.0), in task
    order, that the mapping can use (session.py: ≥ 3 noted facts behind the first action)
    → the first `COUNT` → a fault count each (`MULTIPLICITY`, the paper's appendix table: 5 cases
    with one poisoned record, 5 with two, 38 with three, 2 with four; the fours to the
    trajectories with the most asked facts, the rest in a seeded order) → per trajectory:
    the session run clean, poisoned (poison.py), labelled and recorded exactly as the
    controlled generator does (`build.assemble`: gold from the diff and the true flow,
    recording errors at `fidelity`, a share `answerable` of final questions that may fall
    back to the conversation).

Every random choice is seeded by (seed, case, attempt); the same source and seed give
byte-identical files. `build_one` rebuilds one case from its source row alone (the manifest
holds its fault count), which is how a test checks a committed case against a fixture.

The selected source lines, with the fields the builder reads (`source_rows`), are committed
beside the cases (`cases/source.jsonl`): `bench generate|sweep --set transfer` builds the set
from them at any seed, fidelity and share (benchmark/transfer/caseset.py) without the
network; `bench/transfer.py build` writes them from a fetched copy of the source.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from provrepair.benchmark.build import Outcome, Recording, assemble
from provrepair.benchmark.cases import store_bucket
from provrepair.benchmark.generate import MANIFEST, dumps
from provrepair.benchmark.quotas import Slot, stratified
from provrepair.benchmark.runtime import run_session
from provrepair.benchmark.transfer.poison import poison
from provrepair.benchmark.transfer.session import DOMAIN, Mapped, iter_usable
from provrepair.benchmark.transfer.tau2 import SOURCE, Trajectory, trajectory
from provrepair.provenance.errors import InputError, InternalError
from provrepair.provenance.models import Case
from provrepair.provenance.vocab import FaultType

COUNT = 50
# the fault multiplicity of the paper's adapted LongMemEval-V2 subset (its appendix)
MULTIPLICITY = {1: 5, 2: 5, 3: 38, 4: 2}
SEED = 42
FIDELITY = 0.8        # the controlled benchmark's headline setting (BENCHMARKS.md)
ANSWERABLE = 0.5      # `bench sweep`'s default share
ATTEMPTS = 20
CASES_DIR = Path(__file__).resolve().parent / "cases"
SOURCE_FILE = CASES_DIR / "source.jsonl"
# what the builder reads of a source line (the judge's fields and the author's file path
# are left out of the committed copy)
SOURCE_FIELDS = ("label", "task_id", "simulation_id", "tau2_reward", "prompt")
SET_NAME = "transfer"  # `bench generate|sweep --set transfer`, in every manifest


@dataclass(frozen=True)
class Settings:
    seed: int = SEED
    fidelity: float = FIDELITY
    answerable: float = ANSWERABLE

    @property
    def recording(self) -> Recording:
        return Recording(self.seed, self.fidelity, self.answerable)


class TransferError(InternalError):
    """A selected trajectory could not be poisoned as its slot asks (a mapping bug)."""


def case_id(traj: Trajectory) -> str:
    return f"tau2_retail_{int(traj.task_id):03d}"


def selected(rows: list[dict[str, Any]], count: int = COUNT) -> list[tuple[Trajectory, Mapped]]:
    """The usable solved trajectories, in task order, the first `count`."""
    solved = sorted((trajectory(r) for r in rows if float(r.get("tau2_reward", 0.0)) == 1.0),
                    key=lambda t: int(t.task_id))
    return list(iter_usable(solved))[:count]


def fault_counts(chosen: list[tuple[Trajectory, Mapped]], seed: int) -> dict[str, int]:
    """Case id → its number of poisoned records, distributed as `MULTIPLICITY` (scaled down
    proportionally for a smaller selection, every count kept while cases remain)."""
    total = sum(MULTIPLICITY.values())
    quota = {k: n * len(chosen) // total for k, n in MULTIPLICITY.items()}
    quota[3] += len(chosen) - sum(quota.values())
    by_size = sorted(chosen, key=lambda p: (-len(p[1].question.asked), int(p[0].task_id)))
    fours = {case_id(t) for t, m in by_size[:quota[4]] if len(m.question.asked) >= 4}
    rest = [k for k, n in quota.items() if k != 4 for _ in range(n)]
    rest += [3] * (quota[4] - len(fours))
    random.Random(f"{seed}:multiplicity").shuffle(rest)
    counts: dict[str, int] = {}
    for traj, _ in chosen:
        cid = case_id(traj)
        counts[cid] = 4 if cid in fours else rest.pop()
    return counts


def build_one(traj: Trajectory, mapped: Mapped, faults: int, settings: Settings = Settings()) -> Case:
    """One case: the mapped session run clean, `faults` notes poisoned, labelled, recorded."""
    task_id = case_id(traj)
    recording = settings.recording
    mapped.session.answerable = recording.is_answerable(task_id)
    clean = run_session(mapped.session, task_id)
    if not all(clean.answers):
        raise TransferError(f"{task_id}: the clean run leaves a turn unresolved")
    for attempt in range(ATTEMPTS):
        rng = random.Random(f"{settings.seed}:{task_id}:{attempt}")
        found = poison(mapped.session, task_id, clean, faults, rng)
        if found is not None:
            chosen, faulty = found
            notes = sum(1 for m in clean.sink.case().memory_store)
            slot = Slot(task_id, DOMAIN, FaultType.POISONED, faults,
                        store_bucket(notes - faults))
            return assemble(slot, Outcome(clean, faulty, chosen), recording)
    raise TransferError(f"{task_id}: no {faults} poisoned notes change its final answer "
                        f"in {ATTEMPTS} attempts")


def source_rows(rows: list[dict[str, Any]], count: int = COUNT) -> list[dict[str, Any]]:
    """The source lines the set is built from (`selected`, in its order), each with only the
    fields the builder reads: `selected(source_rows(rows))` is `selected(rows)`."""
    by_simulation = {str(r.get("simulation_id", "")): r for r in rows}
    return [{k: by_simulation[traj.simulation_id][k] for k in SOURCE_FIELDS
             if k in by_simulation[traj.simulation_id]}
            for traj, _ in selected(rows, count)]


def build_transfer(rows: list[dict[str, Any]], settings: Settings = Settings(), count: int = COUNT,
                   counts: dict[str, int] | None = None,
                   tick: Callable[[str], None] | None = None,
                   limit: int | None = None) -> tuple[list[Case], dict[str, Any]]:
    """The cases and their manifest (source, settings, each case's origin). `counts` (case id
    → faults) overrides `fault_counts` for the cases it names: a part of the source rebuilt
    with the counts the whole set gave them (a manifest's). `limit`: only that many of the
    cases, a systematic sample by fault count (`quotas.stratified`), each built as in the
    whole set."""
    chosen = selected(rows, count)
    if not chosen:
        raise InputError("no usable solved trajectory in the source rows")
    counts = {**fault_counts(chosen, settings.seed), **(counts or {})}
    if limit is not None:
        chosen = stratified(chosen, limit, lambda pair: (counts[case_id(pair[0])],))
    cases, origins = [], []
    for traj, mapped in chosen:
        cid = case_id(traj)
        cases.append(build_one(traj, mapped, counts[cid], settings))
        origins.append({"case": cid, "tau2_task_id": traj.task_id,
                        "simulation_id": traj.simulation_id, "reward": traj.reward,
                        "turns": mapped.turns,
                        "first_action": {"tool": mapped.question.tool or None,
                                         "message": mapped.action_index},
                        "asked": [f"{e} {k}" for e, k in mapped.question.asked],
                        "faults": counts[cid]})
        if tick is not None:
            tick(cid)
    return cases, manifest(settings, origins)


def manifest(settings: Settings, origins: list[dict[str, Any]]) -> dict[str, Any]:
    spread: dict[str, int] = {}
    for origin in origins:
        spread[str(origin["faults"])] = spread.get(str(origin["faults"]), 0) + 1
    return {"case_set": SET_NAME, "source": {"repository": SOURCE.repository, "commit": SOURCE.commit,
                                          "path": SOURCE.path, "license": SOURCE.license,
                                          "rows": "one τ²-bench retail simulation per line"},
            "seed": settings.seed, "fidelity": settings.fidelity,
            "answerable_share": settings.answerable, "cases": len(origins),
            "fault_multiplicity": dict(sorted(spread.items())), "origins": origins}


def write_transfer(cases: list[Case], summary: dict[str, Any], out: Path) -> None:
    """`<case>.json` per case and the manifest; case files of an earlier build are removed."""
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("tau2_retail_*.json"):
        stale.unlink()
    for case in cases:
        (out / f"{case.task_id}.json").write_text(dumps(case.model_dump(mode="json")),
                                                  encoding="utf-8")
    (out / MANIFEST).write_text(dumps(summary), encoding="utf-8")


def write_source(rows: list[dict[str, Any]], path: Path = SOURCE_FILE) -> None:
    """The source lines (`source_rows`), one JSON object per line, as the source has them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def committed_counts(summary: dict[str, Any]) -> dict[str, int]:
    """Case id → its number of poisoned records, as a manifest records them."""
    return {str(o["case"]): int(o["faults"]) for o in summary.get("origins", [])}


def read_manifest(directory: Path = CASES_DIR) -> dict[str, Any]:
    path = directory / MANIFEST
    if not path.exists():
        raise InputError(f"{directory}: no {MANIFEST}: not a transfer set")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
