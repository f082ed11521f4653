"""The cross-record rules of a whole case as set operations over columns: the fast path.

`validate_case` (provenance/validate.py) feeds `CaseValidator` record by record, making a
`Reference` (field name, owner, target, allowed kinds) for every id a record names, so that
an error can say exactly where it is. On a valid case that bookkeeping is most of the time
spent (BENCHMARKS.md, "Ingest": 0.6 s of 1.6 s to read a 100k-element file). Here the same
rules are checked without locating anything:

- ids are unique across inputs, memories and steps, and every record is of the case's task;
- `sufficient_ids ⊆ used_ids`, `sufficient_from ⊆ derived_from`;
- every referenced id exists with a kind the field allows (docs/case-format.md, "Rejected
  input"): used_ids any node; prev/next_step_ids steps; generated/invalidated_memory_ids,
  derived_from, supersedes and diagnosed_faults memories; last_modified_by an input or step;
- the CHAIN edges have no cycle (edges that all run forward in the trace prove it; else
  `unordered_steps`, the validator's own Kahn pass).

`plainly_valid` answers True only if `validate_case` would accept the case; on False the
located check runs and says what is wrong (a unit test holds the two to the same verdicts).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping

from provrepair.provenance.models import Case, ExecutionStep, MemoryRecord, UserInput


def plainly_valid(case: Case) -> bool:
    """True iff the case passes every cross-record rule (see the module docstring)."""
    inputs = {u.input_id for u in case.session}
    memories = {m.memory_id for m in case.memory_store}
    steps = {s.step_id for s in case.trace}
    every = inputs | memories | steps
    if len(every) != len(case.session) + len(case.memory_store) + len(case.trace):
        return False  # a duplicate id
    task = case.task_id
    records: list[UserInput | MemoryRecord | ExecutionStep] = [
        *case.session, *case.memory_store, *case.trace]
    if any(r.task_id != task for r in records):
        return False
    return (_memory_fields_valid(case, memories, inputs | steps)
            and _step_fields_valid(case, every, memories, steps)
            and memories.issuperset(case.diagnosed_faults)
            and _chain_acyclic(case))


def _memory_fields_valid(case: Case, memories: set[str], inputs_or_steps: set[str]) -> bool:
    memory_targets: list[str] = []
    modifiers: list[str] = []
    for m in case.memory_store:
        if m.sufficient_from and not set(m.sufficient_from).issubset(m.derived_from):
            return False
        memory_targets += m.derived_from
        if m.supersedes is not None:
            memory_targets.append(m.supersedes)
        if m.last_modified_by is not None:
            modifiers.append(m.last_modified_by)
    return memories.issuperset(memory_targets) and inputs_or_steps.issuperset(modifiers)


def _step_fields_valid(case: Case, every: set[str], memories: set[str], steps: set[str]) -> bool:
    any_targets: list[str] = []
    step_targets: list[str] = []
    memory_targets: list[str] = []
    for s in case.trace:
        if s.sufficient_ids and not set(s.sufficient_ids).issubset(s.used_ids):
            return False
        any_targets += s.used_ids
        step_targets += s.prev_step_ids
        step_targets += s.next_step_ids
        memory_targets += s.generated_memory_ids
        memory_targets += s.invalidated_memory_ids
    return (every.issuperset(any_targets) and steps.issuperset(step_targets)
            and memories.issuperset(memory_targets))


def _chain_acyclic(case: Case) -> bool:
    """No CHAIN cycle. Agents record steps in order, so usually every CHAIN edge runs forward
    in the trace, which proves there is none in one pass; otherwise Kahn decides."""
    position = {s.step_id: i for i, s in enumerate(case.trace)}
    for i, s in enumerate(case.trace):
        if ((s.prev_step_ids and max(map(position.__getitem__, s.prev_step_ids)) >= i)
                or (s.next_step_ids and min(map(position.__getitem__, s.next_step_ids)) <= i)):
            break
    else:
        return True
    chain_out: dict[str, set[str]] = defaultdict(set)
    for s in case.trace:
        for prev in s.prev_step_ids:
            chain_out[prev].add(s.step_id)
        if s.next_step_ids:
            chain_out[s.step_id].update(s.next_step_ids)
    return not unordered_steps(chain_out)


def unordered_steps(chain_out: Mapping[str, set[str]]) -> set[str]:
    """Kahn's algorithm over CHAIN edges (step → its successors): the steps it cannot order,
    empty iff there is no cycle (all of them lie on or after a cycle)."""
    indegree: dict[str, int] = defaultdict(int)
    for src, dsts in chain_out.items():
        indegree.setdefault(src, 0)
        for dst in dsts:
            indegree[dst] += 1
    ready = deque(n for n, d in indegree.items() if d == 0)
    while ready:
        for dst in chain_out.get(ready.popleft(), ()):
            indegree[dst] -= 1
            if indegree[dst] == 0:
                ready.append(dst)
    return {n for n, d in indegree.items() if d > 0}
