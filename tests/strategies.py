"""Random well-formed provenance cases, for property tests and benchmarks.

- `provenance_cases(max_steps, max_memories)`: a hypothesis strategy of valid `Case` objects.
- `random_case(seed, n_steps, ...)`: the same generator driven by `random.Random` (no
  hypothesis), for large cases (thousands of steps).
- `CaseBuilder`: a compact builder for small hand-made cases.

One generator (`_Generator`) serves both: it asks a chooser for every decision. Under
hypothesis every root memory and every step reads its decisions from its own fixed-size tape
of random bytes (`TapeChooser`), and the case is a list of such tapes: deleting a step's tape
deletes the step without reinterpreting the others, and a zero byte is always the simple
choice (no flag, first candidate, fewest citations, equal timestamp, a claim), so failing
cases shrink to few steps, few edges and simple types.

Shape of a generated case: a store of root memories created before the trace (some derived,
some superseded or deleted); 1-3 turns, each opened by a user input; steps in nondecreasing
time (ties allowed) chained per turn with occasional branches and joins (CHAIN always points
to an earlier trace position, so it is acyclic); `used_ids` only name earlier nodes; tool
actions cite plans, observations name their action; memory mutations write, supersede or
retire records and sometimes fail (the retired record stays `active`); 0-2 final answers;
1-3 diagnosed faults. In "layered" mode claims, plans, answers and writes cite every step of
the previous layer, so the number of paths grows as width**layers.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

from provenance.models import FORMAT, Case
from provenance.validate import validate_case

T = TypeVar("T")
TASK = "t_gen"
STEP_TYPES = ("claim", "memory_read", "final_answer", "plan", "tool_action", "tool_observation",
              "memory_write", "memory_update", "memory_delete", "memory_consolidate")
SOURCES = ("agent_summary", "user_input", "tool_observation", "claim", "injected")
WINDOW = 8  # recent steps / memories offered as citations (keeps big cases linear-time)


class Chooser(Protocol):
    def integer(self, lo: int, hi: int) -> int: ...
    def flag(self, percent: float) -> bool: ...
    def indices(self, n: int, lo: int, hi: int) -> list[int]: ...


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


class RandomChooser:
    """The same decisions from a seeded `random.Random` (deterministic, no hypothesis)."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def flag(self, percent: float) -> bool:
        return self.rng.random() * 100 < percent

    def indices(self, n: int, lo: int, hi: int) -> list[int]:
        hi = min(hi, n)
        if hi <= 0:
            return []
        return self.rng.sample(range(n), self.rng.randint(min(lo, hi), hi))


class _Generator:
    def __init__(self, max_memories: int, layered: bool, width: int):
        self.ch: Chooser = RandomChooser(0)  # replaced per root memory / step
        self.max_memories = max_memories
        self.layered = layered
        self.width = max(1, width)
        self.inputs: list[dict[str, Any]] = []
        self.memories: dict[str, dict[str, Any]] = {}
        self.steps: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.final_answers = 0
        self.now = 100

    # -- helpers ----------------------------------------------------------------------------
    def pick(self, items: Sequence[T], lo: int, hi: int) -> list[T]:
        """A few of `items` (put the preferred ones first: index 0 is what shrinking keeps)."""
        return [items[i] for i in self.ch.indices(len(items), lo, hi)]

    def recent_steps(self, types: Sequence[str] | None = None) -> list[str]:
        out: list[str] = []
        for s in reversed(self.steps):
            if types is None or s["step_type"] in types:
                out.append(s["step_id"])
                if len(out) == WINDOW:
                    break
        return out

    def recent_memories(self, active_only: bool = False) -> list[str]:
        out: list[str] = []
        for m in reversed(self.memories.values()):
            if not active_only or m["status"] == "active":
                out.append(m["memory_id"])
                if len(out) == WINDOW:
                    break
        return out

    def new_memory(self, ts: int, derived: list[str], supersedes: str | None,
                   by: str | None) -> str:
        mid = f"m_{len(self.memories):03d}"
        self.memories[mid] = {
            "memory_id": mid, "task_id": TASK, "content": f"record {mid}",
            "source": SOURCES[self.ch.integer(0, len(SOURCES) - 1)], "last_modified_by": by,
            "created_at": ts, "last_modified_at": ts, "derived_from": derived,
            "supersedes": supersedes, "status": "active",
            "sufficient_from": [d for d in derived if self.ch.flag(50)]}
        return mid

    def retire(self, mid: str, status: str, by: str | None, ts: int) -> None:
        self.memories[mid].update(status=status, last_modified_by=by, last_modified_at=ts)

    # -- the store before the trace ---------------------------------------------------------
    def roots(self, choosers: Sequence[Chooser]) -> None:
        t = 1
        for ch in choosers:
            self.ch = ch
            t += self.ch.integer(0, 3)
            earlier = self.recent_memories()
            derived = self.pick(earlier, 1, 2) if earlier and self.ch.flag(30) else []
            live = [m for m in earlier if self.memories[m]["status"] != "superseded"]
            old = self.pick(live, 1, 1) if live and self.ch.flag(15) else []
            mid = self.new_memory(t, derived, old[0] if old else None, None)
            if old:
                self.retire(old[0], "superseded", None, t)
            if self.ch.flag(12):
                self.retire(mid, "deleted", None, t)

    # -- the trace --------------------------------------------------------------------------
    def add_input(self, turn: int) -> None:
        self.inputs.append({"input_id": f"u_{turn}", "task_id": TASK, "turn": turn,
                            "content": f"request {turn}", "timestamp": self.now})

    def trace(self, choosers: Sequence[Chooser], turn_starts: set[int] | None,
              max_turns: int) -> None:
        turn = 1
        self.add_input(turn)
        turn_first = 0
        for i, ch in enumerate(choosers):
            self.ch = ch
            new_turn = i > 0 and turn < max_turns and (
                i in turn_starts if turn_starts is not None else self.ch.flag(12))
            if new_turn:
                turn += 1
                turn_first = i
                self.now += self.ch.integer(0, 3)
                self.add_input(turn)
            self.now += self.ch.integer(0, 2)  # 0: equal timestamps
            self.step(i, turn, turn_first, new_turn, last=i == len(choosers) - 1)

    def step(self, i: int, turn: int, turn_first: int, new_turn: bool, last: bool) -> None:
        ch, sid, now = self.ch, f"s_{i:03d}", self.now
        kind = STEP_TYPES[ch.integer(0, len(STEP_TYPES) - 1)]
        if last and not self.final_answers and ch.flag(85):
            kind = "final_answer"  # a trace usually ends with an answer
        if self.steps and self.steps[-1]["step_type"] == "tool_action" and ch.flag(50):
            kind = "tool_observation"  # an action is usually followed by its observation
        full = len(self.memories) >= self.max_memories
        active = self.recent_memories(active_only=True)
        # Fallbacks when a type's prerequisites are missing.
        if kind == "tool_observation" and not self.recent_steps(["tool_action"]):
            kind = "tool_action"
        if kind == "tool_action" and not self.recent_steps(["plan"]):
            kind = "plan"
        if kind == "final_answer" and self.final_answers >= 2:
            kind = "claim"
        if kind in ("memory_update", "memory_consolidate") and (full or not active):
            kind = "memory_delete"
        if kind == "memory_delete" and not active:
            kind = "memory_write"
        if kind == "memory_write" and full:
            kind = "claim"

        user = [u["input_id"] for u in self.inputs[::-1]]  # current turn's input first
        mems, steps = self.recent_memories(), self.recent_steps()
        used: list[str] = []
        prev: list[str] = []
        invalidated: list[str] = []
        generated: list[str] = []
        status = "ok"
        if self.layered and kind in ("claim", "plan", "final_answer", "memory_write"):
            layer = i // self.width
            used += [f"s_{j:03d}" for j in range((layer - 1) * self.width, layer * self.width)
                     if 0 <= j < i]
        if kind == "memory_read":
            used += self.pick(mems, 1, 3) + self.pick(user, 0, 1)
        elif kind in ("claim", "plan", "final_answer", "memory_write"):
            used += self.pick(steps, 1 if kind == "final_answer" else 0, 2)
            used += self.pick(mems, 0, 2) + self.pick(user, 0, 1)
        elif kind == "tool_action":
            used += self.pick(self.recent_steps(["plan"]), 1, 2)
            if ch.flag(25):  # an argument read straight from another node
                used += self.pick(mems + steps, 1, 1)
        elif kind == "tool_observation":
            action = self.pick(self.recent_steps(["tool_action"]), 1, 1)[0]
            if ch.flag(80):
                used.append(action)
            if action not in used or ch.flag(50):
                prev.append(action)
            if ch.flag(15):
                used += self.pick(mems + steps, 1, 1)
            status = "error" if ch.flag(20) else "ok"
        else:  # memory_update / memory_delete / memory_consolidate
            invalidated = self.pick(active, 1, 2 if kind == "memory_consolidate" else 1)
            used += [m for m in invalidated if ch.flag(80)] + self.pick(steps, 0, 1)
            used += self.pick(user, 0, 1)

        if kind == "final_answer":
            self.final_answers += 1
        if kind in ("memory_write", "memory_update", "memory_consolidate"):
            for _ in range(2 if kind == "memory_write" and ch.flag(20) else 1):
                if len(self.memories) >= self.max_memories:
                    break
                base = [m for m in used if m in self.memories]
                derived = list(dict.fromkeys(invalidated + self.pick(base, 0, 2)))
                sup = invalidated[0] if invalidated and (kind == "memory_update" or ch.flag(60)) \
                    else None
                generated.append(self.new_memory(now, derived, sup, sid))
        for m in invalidated:
            if not ch.flag(25):  # else: the mutation failed and the record stays active
                self.retire(m, "deleted" if kind == "memory_delete" else "superseded", sid, now)

        # CHAIN: the previous step of the turn, sometimes a branch or a join, sometimes the
        # last step of the previous turn; always an earlier trace position, hence acyclic.
        turn_steps = [s["step_id"] for s in self.steps[turn_first:]] if not new_turn else []
        if turn_steps:
            if ch.flag(10):
                prev += self.pick(turn_steps[::-1], 1, 2)
            else:
                prev.append(turn_steps[-1])
        elif self.steps and ch.flag(30):
            prev.append(self.steps[-1]["step_id"])
        used, prev = list(dict.fromkeys(used)), list(dict.fromkeys(prev))
        for p in prev:
            self.by_id[p]["next_step_ids"].append(sid)
        step = {"step_id": sid, "task_id": TASK, "step_type": kind, "content": f"{kind} {sid}",
                "prev_step_ids": prev, "next_step_ids": [], "invalidated_memory_ids": invalidated,
                "generated_memory_ids": generated, "used_ids": used,
                "sufficient_ids": [u for u in used if ch.flag(40)], "timestamp": now,
                "turn": turn, "status": status}
        if kind == "tool_action":
            step.update(tool_name="tool", tool_args={"i": i})
        self.steps.append(step)
        self.by_id[sid] = step

    def case(self, faults: list[str]) -> Case:
        return validate_case(Case.model_validate({
            "format": FORMAT, "task_id": TASK, "domain": "generated", "session": self.inputs,
            "memory_store": list(self.memories.values()), "trace": self.steps,
            "diagnosed_faults": faults}))


def _generate(roots: Sequence[Chooser], steps: Sequence[Chooser], last: Chooser, max_memories: int,
              layered: bool, width: int, turn_starts: set[int] | None, max_turns: int,
              n_faults: int) -> Case:
    gen = _Generator(max_memories, layered, width)
    gen.roots(roots)
    gen.trace(steps, turn_starts, max_turns)
    memory_ids = list(gen.memories)
    faults = [memory_ids[i] for i in last.indices(len(memory_ids), 1, n_faults)]
    # Stale records (a failed delete/update/consolidate left them active) are rare among all
    # memories; make one of them the first fault often, so failed-mutation seeds are common.
    stale = [m for s in gen.steps for m in s["invalidated_memory_ids"]
             if gen.memories[m]["status"] == "active"]
    if stale and last.flag(40):
        faults = list(dict.fromkeys([stale[last.integer(0, len(stale) - 1)], *faults]))[:n_faults]
    return gen.case(faults)


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
    return _generate(roots, steps, last, max_memories, layered, width, None, 3, 3)


def provenance_cases(max_steps: int = 40, max_memories: int = 15) -> st.SearchStrategy[Case]:
    """Valid random cases (they pass `validate_case`); see the module docstring."""
    return _provenance_cases(max_steps, max_memories)


def random_case(seed: int, n_steps: int, n_memories: int | None = None, n_turns: int = 3,
                layered: bool = True, width: int = 3, n_faults: int = 2,
                n_roots: int | None = None) -> Case:
    """A deterministic random case of exactly `n_steps` steps (for benchmarks)."""
    max_memories = n_memories if n_memories is not None else max(4, n_steps // 3)
    roots = n_roots if n_roots is not None else max(1, min(max_memories // 2, 50))
    starts = {n_steps * k // n_turns for k in range(1, n_turns)}
    ch = RandomChooser(seed)
    return _generate([ch] * roots, [ch] * n_steps, ch, max_memories, layered, width, starts,
                     n_turns, n_faults)


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
