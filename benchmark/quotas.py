"""The benchmark's distribution (the paper's Table 1 and App. E slices) and the case slots
it expands to, deterministically from the seed."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from provrepair.provenance.vocab import FaultType

T = TypeVar("T")
P, S, W, D = (FaultType.POISONED, FaultType.STALE, FaultType.WRONG_USER,
              FaultType.SUMMARY_DRIFT)
DOMAINS = ("shopping", "travel", "customer_support")
TABLE1: dict[str, dict[FaultType, int]] = {
    "shopping": {P: 14, S: 10, W: 11, D: 13},
    "travel": {P: 12, S: 12, W: 12, D: 13},
    "customer_support": {P: 16, S: 12, W: 11, D: 14},
}
MULTI = {"shopping": 7, "travel": 7, "customer_support": 8}      # cases with 2-3 faults
THREE = {"shopping": 2, "travel": 1, "customer_support": 2}      # of which 3 faults
BINS: list[tuple[str, int, int | None, int]] = [                  # benign active records
    ("0–5", 0, 5, 27), ("6–8", 6, 8, 36), ("9–11", 9, 11, 58), ("≥12", 12, None, 29)]


@dataclass(frozen=True)
class Slot:
    task_id: str
    domain: str
    primary: FaultType
    n_faults: int
    bin: str

    @property
    def bounds(self) -> tuple[int, int | None]:
        _, low, high, _ = next(b for b in BINS if b[0] == self.bin)
        return low, high


def bin_of(size: int) -> str:
    return next(name for name, low, high, _ in BINS if size >= low and (high is None or size <= high))


def subset(all_slots: list[Slot], limit: int | None) -> list[Slot]:
    """`limit` slots in proportion to domain × primary fault type × single/multi-fault."""
    if limit is None:
        return all_slots
    return stratified(all_slots, limit, lambda s: (s.n_faults > 1, s.domain, s.primary.value))


def stratified(items: list[T], limit: int, stratum: Callable[[T], tuple[Any, ...]]) -> list[T]:
    """A systematic sample: the items sorted by stratum (its key's first part outermost), then
    every (len/limit)-th one — each part of the key, and each combination as far as `limit`
    allows, keeps its share. Returned in the items' own order."""
    if limit >= len(items):
        return list(items)
    ranked = sorted(range(len(items)), key=lambda i: (stratum(items[i]), i))
    step = len(items) / max(limit, 1)
    keep = {ranked[int((k + 0.5) * step)] for k in range(max(limit, 0))}
    return [item for i, item in enumerate(items) if i in keep]


def slots(seed: int) -> list[Slot]:
    """The 150 case slots: Table 1 per domain, 128/22 single/multi, the store-size bins."""
    rng = random.Random(f"provrepair-bench:{seed}")
    bins = [name for name, _, _, count in BINS for _ in range(count)]
    rng.shuffle(bins)
    out: list[Slot] = []
    for domain in DOMAINS:
        primaries = [kind for kind, count in TABLE1[domain].items() for _ in range(count)]
        rng.shuffle(primaries)
        multi = rng.sample(range(len(primaries)), MULTI[domain])
        three = set(multi[:THREE[domain]])
        for index, primary in enumerate(primaries):
            n_faults = 3 if index in three else 2 if index in multi else 1
            out.append(Slot(f"{domain}_task_{index + 1:03d}", domain, primary, n_faults,
                            bins[len(out)]))
    return out
