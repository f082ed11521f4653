"""Typed edges derived from the case fields (docs/case-format.md, 'Edges derived from the fields').

Pure functions, no database. `derive_edges(case)` is the whole-case form; the per-record
functions are what the live recorder uses, so both paths derive edges the same way.
Edges point from prerequisite to dependent, one relationship per label, deduplicated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from provrepair.provenance.models import Case, ExecutionStep, MemoryRecord, UserInput
from provrepair.provenance.vocab import INVALIDATION_EDGE, EdgeLabel


class NodeKind:
    USER_INPUT = "user_input"
    MEMORY = "memory"
    STEP = "step"


class Edge(NamedTuple):
    """One derived edge; immutable, ordered and hashable. A NamedTuple, not a frozen
    dataclass: a case file of 1M elements derives ~700k of them, and a frozen dataclass's
    constructor cost twice as much (BENCHMARKS.md, "Ingest")."""

    label: EdgeLabel
    src: str
    dst: str
    sufficient: bool | None = None  # set only on CITE, SUPPORT, SUPERSEDE, DERIVE


KindOf = Callable[[str], str | None]


def step_edges(step: ExecutionStep, kind_of: KindOf) -> Iterator[Edge]:
    """CHAIN, CITE, SUPPORT, PRODUCE and the invalidation edge of one step."""
    sid = step.step_id
    for prev in step.prev_step_ids:
        yield Edge(EdgeLabel.CHAIN, prev, sid)
    for nxt in step.next_step_ids:
        yield Edge(EdgeLabel.CHAIN, sid, nxt)
    sufficient = set(step.sufficient_ids)
    for used in step.used_ids:
        label = EdgeLabel.SUPPORT if kind_of(used) == NodeKind.MEMORY else EdgeLabel.CITE
        yield Edge(label, used, sid, used in sufficient)
    for mem in step.generated_memory_ids:
        yield Edge(EdgeLabel.PRODUCE, sid, mem)
    # Only delete/update/consolidate steps retire records; ids listed on other step types
    # are recorded verbatim but make no edge (the spec's table names just these three).
    invalidation = INVALIDATION_EDGE.get(step.step_type)
    if invalidation is not None:
        for mem in step.invalidated_memory_ids:
            yield Edge(invalidation, mem, sid)


def memory_edges(memory: MemoryRecord) -> Iterator[Edge]:
    """SUPERSEDE (always sufficient) and DERIVE edges into one memory."""
    mid = memory.memory_id
    if memory.supersedes is not None:
        yield Edge(EdgeLabel.SUPERSEDE, memory.supersedes, mid, True)
    sufficient = set(memory.sufficient_from)
    for ancestor in memory.derived_from:
        yield Edge(EdgeLabel.DERIVE, ancestor, mid, ancestor in sufficient)


def first_steps_by_turn(steps: Iterable[ExecutionStep]) -> dict[int, str]:
    """The earliest step of each turn: by timestamp, ties by trace position."""
    first: dict[int, tuple[int, int, str]] = {}
    for position, step in enumerate(steps):
        key = (step.timestamp, position, step.step_id)
        if step.turn not in first or key < first[step.turn]:
            first[step.turn] = key
    return {turn: key[2] for turn, key in first.items()}


def initiate_edges(inputs: Iterable[UserInput], first_step: dict[int, str]) -> Iterator[Edge]:
    """INITIATE: each user input → the earliest step of its turn (none if the turn is empty)."""
    for user_input in inputs:
        target = first_step.get(user_input.turn)
        if target is not None:
            yield Edge(EdgeLabel.INITIATE, user_input.input_id, target)


def dedupe(edges: Iterable[Edge]) -> list[Edge]:
    """One edge per (label, src, dst); a sufficient mark on any duplicate wins."""
    merged: dict[tuple[EdgeLabel, str, str], Edge] = {}
    for edge in edges:
        key = edge[:3]  # (label, src, dst)
        old = merged.get(key)
        if old is None or (edge.sufficient and not old.sufficient):
            merged[key] = edge
    return list(merged.values())


def derive_edges(case: Case) -> list[Edge]:
    """Every edge of a (valid) case, in a deterministic order."""
    kinds = node_kinds(case)
    edges: list[Edge] = []
    for step in case.trace:
        edges.extend(step_edges(step, kinds.get))
    for memory in case.memory_store:
        edges.extend(memory_edges(memory))
    edges.extend(initiate_edges(case.session, first_steps_by_turn(case.trace)))
    return dedupe(edges)


def node_kinds(case: Case) -> dict[str, str]:
    """id → node kind for every node of a case."""
    kinds = {u.input_id: NodeKind.USER_INPUT for u in case.session}
    kinds.update({m.memory_id: NodeKind.MEMORY for m in case.memory_store})
    kinds.update({s.step_id: NodeKind.STEP for s in case.trace})
    return kinds
