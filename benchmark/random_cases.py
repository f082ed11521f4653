"""Random well-formed provenance cases of any size, driven by `random.Random` (no hypothesis):
the planner benchmarks' cases (bench/plan.py) and, through a byte-tape chooser, the property
tests' generator (tests/strategies.py).

Shape of a generated case: a store of root memories created before the trace (some derived,
some superseded or deleted); 1-3 turns, each opened by a user input; steps in nondecreasing
time (ties allowed) chained per turn with occasional branches and joins (CHAIN always points
to an earlier trace position, so it is acyclic); `used_ids` only name earlier nodes; tool
actions cite plans, observations name their action; memory mutations write, supersede or
retire records and sometimes fail (the retired record stays `active`); 0-2 final answers;
1-3 diagnosed faults. In "layered" mode claims, plans, answers and writes cite every step of
the previous layer, so the number of paths grows as width**layers.

Every decision is asked of a `Chooser`, so the same generator serves both drivers.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from provrepair.provenance.models import FORMAT, Case
from provrepair.provenance.validate import validate_case
from provrepair.provenance.vocab import MemoryStatus

T = TypeVar("T")
TASK = "t_gen"
STEP_TYPES = ("claim", "memory_read", "final_answer", "plan", "tool_action", "tool_observation",
              "memory_write", "memory_update", "memory_delete", "memory_consolidate")
SOURCES = ("agent_summary", "user_input", "tool_observation", "claim", "injected")
ACTIVE, DELETED, SUPERSEDED = (MemoryStatus.ACTIVE.value, MemoryStatus.DELETED.value,
                               MemoryStatus.SUPERSEDED.value)
WINDOW = 8  # recent steps / memories offered as citations (keeps big cases linear-time)


class Chooser(Protocol):
    def integer(self, lo: int, hi: int) -> int: ...
    def flag(self, percent: float) -> bool: ...
    def indices(self, n: int, lo: int, hi: int) -> list[int]: ...


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


class Generator:
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
            if not active_only or m["status"] == ACTIVE:
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
            "supersedes": supersedes, "status": ACTIVE,
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
            live = [m for m in earlier if self.memories[m]["status"] != SUPERSEDED]
            old = self.pick(live, 1, 1) if live and self.ch.flag(15) else []
            mid = self.new_memory(t, derived, old[0] if old else None, None)
            if old:
                self.retire(old[0], SUPERSEDED, None, t)
            if self.ch.flag(12):
                self.retire(mid, DELETED, None, t)

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
                self.retire(m, DELETED if kind == "memory_delete" else SUPERSEDED, sid, now)

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


def generate(roots: Sequence[Chooser], steps: Sequence[Chooser], last: Chooser, max_memories: int,
              layered: bool, width: int, turn_starts: set[int] | None, max_turns: int,
              n_faults: int) -> Case:
    gen = Generator(max_memories, layered, width)
    gen.roots(roots)
    gen.trace(steps, turn_starts, max_turns)
    memory_ids = list(gen.memories)
    faults = [memory_ids[i] for i in last.indices(len(memory_ids), 1, n_faults)]
    # Stale records (a failed delete/update/consolidate left them active) are rare among all
    # memories; make one of them the first fault often, so failed-mutation seeds are common.
    stale = [m for s in gen.steps for m in s["invalidated_memory_ids"]
             if gen.memories[m]["status"] == ACTIVE]
    if stale and last.flag(40):
        faults = list(dict.fromkeys([stale[last.integer(0, len(stale) - 1)], *faults]))[:n_faults]
    return gen.case(faults)


def random_case(seed: int, n_steps: int, n_memories: int | None = None, n_turns: int = 3,
                layered: bool = True, width: int = 3, n_faults: int = 2,
                n_roots: int | None = None) -> Case:
    """A deterministic random case of exactly `n_steps` steps (for benchmarks)."""
    max_memories = n_memories if n_memories is not None else max(4, n_steps // 3)
    roots = n_roots if n_roots is not None else max(1, min(max_memories // 2, 50))
    starts = {n_steps * k // n_turns for k in range(1, n_turns)}
    ch = RandomChooser(seed)
    return generate([ch] * roots, [ch] * n_steps, ch, max_memories, layered, width, starts,
                     n_turns, n_faults)
