"""The memory lifecycle, in one place: which status a mutation step leaves the records it
invalidates in, which records a step at time `ts` can see, and how new ids are allocated.
Replay (repair/replay/), the loaders (loaders/agent_run.py) and the benchmark's simulated
agent all use these, so the three cannot drift apart.

Retirement (docs/case-format.md, the memory lifecycle): an update or a consolidation
supersedes the records it invalidates, a delete deletes them; other steps retire nothing.

Visibility: a step at `ts` sees the records active now and created at or before `ts`; the
agent, now, the active records of its task, recorded or written by a committed repair
(`visible_now`: what the echo sweep over a memory namespace reads, repair/plan/scope.py).

New node ids, allocated against every id of the task (one id space per task, inputs,
memories and steps alike: docs/case-format.md, "Rejected input"), so an allocated id is never
one a record already has or will have: a loader's version id never overwrites a real record
named like it (`m_best~2`), a replay's regenerated record never reuses a stored id.

Two shapes, one rule (the first free number from `start`):
- a new record: `prefix` + number (`m_n007`, the paper's naming for regenerated records);
- a new version of a record the agent updated in place: `<agent id>~N` from N = 2. The
  version's `record_id` keeps the agent's own id (docs/case-format.md, "Agent ids").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from provrepair.provenance.models import MemoryRecord
from provrepair.provenance.state.runs import visible_node
from provrepair.provenance.vocab import MemoryStatus, StepType

RETIRES: Mapping[StepType, MemoryStatus] = {
    StepType.MEMORY_UPDATE: MemoryStatus.SUPERSEDED,
    StepType.MEMORY_CONSOLIDATE: MemoryStatus.SUPERSEDED,
    StepType.MEMORY_DELETE: MemoryStatus.DELETED,
}


def retired_status(step_type: StepType | str) -> MemoryStatus | None:
    """The status a step of this type leaves the records it invalidates in (None: it retires
    nothing)."""
    return RETIRES.get(StepType(step_type))


def visible_at(record: MemoryRecord, ts: int) -> bool:
    """Whether a step at `ts` can read `record` (active, and written by then)."""
    return record.status is MemoryStatus.ACTIVE and record.created_at <= ts


def visible_now(props: Mapping[str, Any]) -> bool:
    """Whether the agent reads a stored memory node now: active, and part of its task (a
    recorded record, or one a committed repair wrote: state/runs.py `visible_node`)."""
    return props.get("status") == MemoryStatus.ACTIVE and visible_node(props)


# What a repair takes out of the agent's retrieval, keeping the content (docs/method.md rules
# 1-2): the view draws these records dashed.
OUT_OF_RETRIEVAL = frozenset({MemoryStatus.DELETED, MemoryStatus.QUARANTINED})

# The status of a record a repair run wrote until the run commits and gives it its own
# (repair/replay/writeback.py; cypher/replay/commit_repair_run): never active before that.
PENDING = "pending"


def memory_params() -> dict[str, str]:
    """The status a query selects visible records by, as a Cypher parameter (`$active`):
    a query never spells it; `visible_now` decides the rest on what it returns."""
    return {"active": MemoryStatus.ACTIVE.value}


VERSION_SEPARATOR = "~"


def allocate_id(prefix: str, taken: set[str], *, start: int = 1, width: int = 3) -> str:
    """The first `prefix` + zero-padded number ≥ `start` not in `taken`; added to `taken`, so
    a caller allocating several ids in a row passes the same set each time."""
    number = start
    while (candidate := f"{prefix}{number:0{width}d}") in taken:
        number += 1
    taken.add(candidate)
    return candidate


def version_id(agent_id: str, taken: set[str]) -> str:
    """The id of a new version of the agent's record `agent_id` (`<agent id>~2`, `~3`…)."""
    return allocate_id(f"{agent_id}{VERSION_SEPARATOR}", taken, start=2, width=1)


def next_number(ids: Iterable[str]) -> int:
    """One past the largest trailing number of `ids` (0 → 1): where numbering resumes."""
    numbers = [int(m.group(1)) for i in ids if (m := re.search(r"(\d+)$", i))]
    return max(numbers, default=0) + 1
