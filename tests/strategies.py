"""Random well-formed provenance cases for property tests, and hand-made small cases.

- `provenance_cases(max_steps, max_memories)`: a hypothesis strategy of valid `Case` objects.
- `random_case(seed, n_steps, ...)`: the same generator driven by `random.Random`, for large
  cases (it lives in the library, `provrepair.benchmark.random_cases`, for the benchmarks).
- `CaseBuilder`: a compact builder for small hand-made cases.

One generator (`random_cases.generate`) serves both: it asks a chooser for every decision.
Under hypothesis every root memory and every step reads its decisions from its own fixed-size
tape of random bytes (`TapeChooser`), and the case is a list of such tapes: deleting a step's
tape deletes the step without reinterpreting the others, and a zero byte is always the simple
choice (no flag, first candidate, fewest citations, equal timestamp, a claim), so failing
cases shrink to few steps, few edges and simple types.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

from provrepair.benchmark.random_cases import generate, random_case
from provrepair.provenance.models import FORMAT, Case
from provrepair.provenance.validate import validate_case

__all__ = ["CaseBuilder", "TapeChooser", "provenance_cases", "random_case"]


class TapeChooser:
    """Decisions read from a tape of bytes (zeros past its end); 0 is the simple choice."""

    def __init__(self, tape: bytes):
        self.tape = tape
        self.at = 0

    def _next(self) -> int:
        value = self.tape[self.at] if self.at < len(self.tape) else 0
        self.at += 1
        return value

    def integer(self, lo: int, hi: int) -> int:
        return lo + self._next() % (hi - lo + 1)

    def flag(self, percent: float) -> bool:  # 0 → False
        return self._next() % 100 >= 100 - percent

    def indices(self, n: int, lo: int, hi: int) -> list[int]:
        hi = min(hi, n)
        if hi <= 0:
            return []
        out: list[int] = []
        for _ in range(self.integer(min(lo, hi), hi)):
            j = self._next() % n
            while j in out:  # probe to the next free index: always k distinct indices
                j = (j + 1) % n
            out.append(j)
        return out


ROOT_TAPE, STEP_TAPE = 12, 40  # bytes of decisions per root memory / per step


@st.composite
def _provenance_cases(draw: Callable[[st.SearchStrategy[Any]], Any], max_steps: int,
                      max_memories: int) -> Case:
    def tapes(size: int, most: int) -> list[TapeChooser]:
        # The count is drawn first, so large cases are common (a plain list averages ~6).
        n = draw(st.integers(1, most))
        raw = draw(st.lists(st.binary(min_size=size, max_size=size), min_size=n, max_size=n))
        return [TapeChooser(t) for t in raw]

    shape = TapeChooser(draw(st.binary(min_size=2, max_size=2)))
    layered = shape.flag(25)
    width = shape.integer(2, 3) if layered else 1
    roots = tapes(ROOT_TAPE, max(1, max_memories // 2))
    steps = tapes(STEP_TAPE, max_steps)
    last = TapeChooser(draw(st.binary(min_size=8, max_size=8)))
    return generate(roots, steps, last, max_memories, layered, width, None, 3, 3)


def provenance_cases(max_steps: int = 40, max_memories: int = 15) -> st.SearchStrategy[Case]:
    """Valid random cases (they pass `validate_case`); see the module docstring."""
    return _provenance_cases(max_steps, max_memories)


class CaseBuilder:
    """Compact hand-made cases. With `chain=True` a step chains to the previous step of its
    turn unless `prev` is given; `suff=True` marks every used id sufficient."""

    def __init__(self, task_id: str = "t_ref", chain: bool = True):
        self.task_id = task_id
        self.chain = chain
        self.raw: dict[str, Any] = {"format": FORMAT, "task_id": task_id, "domain": "unit",
                                    "session": [], "memory_store": [], "trace": []}

    def user(self, input_id: str, turn: int = 1, ts: int = 0) -> CaseBuilder:
        self.raw["session"].append({"input_id": input_id, "task_id": self.task_id, "turn": turn,
                                    "content": input_id, "timestamp": ts})
        return self

    def mem(self, memory_id: str, ts: int = 0, status: str = "active",
            derived: Sequence[str] = (), suff_from: Sequence[str] | bool = (),
            supersedes: str | None = None) -> CaseBuilder:
        self.raw["memory_store"].append({
            "memory_id": memory_id, "task_id": self.task_id, "content": memory_id,
            "source": "agent_summary", "last_modified_by": None, "created_at": ts,
            "last_modified_at": ts, "derived_from": list(derived), "supersedes": supersedes,
            "status": status,
            "sufficient_from": list(derived) if suff_from is True else list(suff_from or [])})
        return self

    def step(self, step_id: str, step_type: str, ts: int, used: Sequence[str] = (),
             suff: Sequence[str] | bool = (), gen: Sequence[str] = (), inv: Sequence[str] = (),
             prev: Sequence[str] | None = None, turn: int = 1, status: str = "ok") -> CaseBuilder:
        trace = self.raw["trace"]
        if prev is None and not self.chain:
            prev = []
        if prev is None:
            same_turn = [s for s in trace if s["turn"] == turn]
            prev = [same_turn[-1]["step_id"]] if same_turn else []
        for p in prev:
            next(s for s in trace if s["step_id"] == p)["next_step_ids"].append(step_id)
        trace.append({
            "step_id": step_id, "task_id": self.task_id, "step_type": step_type,
            "content": step_id, "prev_step_ids": list(prev), "next_step_ids": [],
            "invalidated_memory_ids": list(inv), "generated_memory_ids": list(gen),
            "used_ids": list(used), "sufficient_ids": list(used) if suff is True else list(suff or []),
            "timestamp": ts, "turn": turn, "status": status})
        return self

    def case(self, faults: Sequence[str]) -> Case:
        return validate_case(Case.model_validate({**self.raw, "diagnosed_faults": list(faults)}))
