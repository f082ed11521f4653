"""A captured conversation extended by one trace, at the cost of that trace (issue 28).

Live capture (loaders/otel_runs.py) keeps, for each conversation it stored, the reading of
every span read so far (`RunReading`: the span reader and the run builder, loaders/otel.py)
and what of it is in the store (`CapturedRun`). When a later trace of the conversation ends,
its spans are read on top of that reading and only what they add is written (`Extension`):
the new inputs, records and steps, the records whose status they changed, the step before
them whose CHAIN now continues, the edges of all these, and the task's record. Every write is
an idempotent MERGE (cypher/ingest/merge_nodes.cypher, merge_edges.cypher, merge_task.cypher).

The ids are those a reading of all the conversation's spans at once gives, because it is the
same reading fed the same spans in the same order; a later request's context items that name
earlier messages, records or tool calls resolve against that reading, never by reading the
earlier spans again. Where the new spans would change what is stored beyond adding to it,
`extend` returns None and the caller reads the conversation again from its journal and
replaces the task (as every trace end did before; a repaired task is not replaced, that
reading is merged into it: loaders/otel_merge.py):
- a new span comes before the last one read (the reading order, loaders/otel.py `Span.order`);
- a stored final answer stops being one (a later output of its turn: its label changes);
- a turn's first step changes (its INITIATE edge moves);
- a new record id is an id the loader already named one of its own (`m~2`, `s_002`: the agent
  named a record so; provenance/state/memory.py allocates ours around the agent's), or one
  a repair's node has (`reserve`: nor is a repair's id ever given to a new node);
- a stored version turns out never to have existed (a later read shows its update did not
  take effect: loaders/agent_run.py takes it back).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from provrepair.loaders.agent_run import SOURCES, WARNINGS, renamed
from provrepair.loaders.otel import RunReading, Span
from provrepair.provenance.edges import Edge, NodeKind, dedupe, memory_edges, step_edges
from provrepair.provenance.models import ExecutionStep, MemoryRecord, UserInput
from provrepair.provenance.rows import (
    dumps,
    edge_row,
    input_row_json,
    memory_row_json,
    node_type,
    step_row_json,
)
from provrepair.provenance.vocab import EdgeLabel

FirstStep = tuple[int, int, str]  # a turn's first step: (timestamp, position, step id)


@dataclass(frozen=True)
class Extension:
    """What one trace adds to a stored task: node rows ({uid, type, props}), edge rows
    ({src, dst, label, sufficient}) and the task record's properties; `changed`: the rows of
    stored records whose status the trace changed (written so that a status a repair set
    since stays: cypher/capture/merge_captured_memories.cypher)."""

    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    task: dict[str, Any]
    changed: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class CapturedRun:
    """A conversation's reading and what of it is stored (see the module docstring)."""

    key: str       # the task key
    reading: RunReading
    token: str     # the task's capture token when this reading was last stored
    names: dict[str, str] = field(default_factory=dict)  # placeholder → id (ours, versions)
    taken: set[str] = field(default_factory=set)         # every id named so far
    versions: set[str] = field(default_factory=set)      # ids not the agent's: ours, a repair's
    repairs: int = 0   # the task's repair runs when their nodes' ids were last reserved
    starts: dict[str, int] = field(default_factory=dict)  # id prefix → next number to try
    inputs: int = 0    # how many inputs, records and steps are stored
    memories: int = 0
    steps: int = 0
    kinds: dict[str, str] = field(default_factory=dict)  # id → node kind
    positions: dict[str, int] = field(default_factory=dict)  # record key → position
    first: dict[int, FirstStep] = field(default_factory=dict)
    finals: dict[int, int] = field(default_factory=dict)  # turn → position of its answer
    inputs_of: dict[int, list[str]] = field(default_factory=dict)  # turn → input ids

    @classmethod
    def stored(cls, key: str, reading: RunReading, token: str) -> CapturedRun:
        """The reading just stored whole (a full rebuild): everything in it is stored."""
        run = cls(key, reading, token)
        builder = reading.builder
        run.names = builder.names(None, builder.taken_ids(), run.starts)
        run.versions = set(run.names.values())
        run.taken = builder.taken_ids() | run.versions
        run._take(builder.session, list(builder.memories), builder.trace)
        builder.touched.clear()
        builder.withdrawn.clear()
        return run

    def reserve(self, ids: set[str], repairs: int) -> None:
        """The ids of every node stored under the task, `repairs` repair runs so far: those
        the reading did not make (a repair's) are never given to a new node, and a record
        the agent names so is read again whole (loaders/otel_merge.py moves it)."""
        others = ids - self.kinds.keys()
        self.taken |= others
        self.versions |= others
        self.repairs = repairs

    def extend(self, spans: list[Span]) -> Extension | None:
        """Read the trace's spans (in start order) and say what they add; None when they
        change what is stored beyond adding to it (module docstring). Raises CaseError as
        a full reading would; the reading is then unusable (the caller drops it)."""
        if not spans:
            return self._extension([], [], [], [], [])
        if spans[0].order <= self.reading.last:
            return None
        builder = self.reading.read(spans).builder
        withdrawn, builder.withdrawn = builder.withdrawn, set()
        if any(version in self.positions for version in withdrawn):
            return None  # a stored version turned out never to exist: read again whole
        inputs = builder.session[self.inputs:]
        memories = list(islice(builder.memories, self.memories, None))
        steps = builder.trace[self.steps:]
        real = [m for m in memories if m not in builder.unnamed]  # the agent's own ids
        if not self.versions.isdisjoint(real):
            return None
        changed = [m for m in builder.touched if self.positions.get(m, self.memories)
                   < self.memories]
        builder.touched.clear()
        continued = bool(steps) and bool(steps[0]["prev_step_ids"])
        initiate = self._turns(inputs, steps)
        if initiate is None:
            return None
        self.taken.update(real)
        named = len(self.names)
        builder.names(self.names, self.taken, self.starts)
        self.versions.update(islice(self.names.values(), named, None))
        earlier = [builder.trace[self.steps - 1]] if continued else []
        stored_steps = self.steps
        self._take(inputs, memories, steps)
        return self._extension(inputs, memories, changed, earlier + steps, sorted(initiate),
                               first_step=stored_steps - len(earlier))

    # -- internals --------------------------------------------------------------------------

    def _turns(self, inputs: list[dict[str, Any]], steps: list[dict[str, Any]]
               ) -> set[int] | None:
        """The turns whose INITIATE edges the new records make (first step or inputs new);
        None when a stored first step or final answer would change."""
        first: dict[int, FirstStep] = {}  # what the new steps make, over what is stored
        turns: set[int] = {u["turn"] for u in inputs}
        for position, step in enumerate(steps, self.steps):
            turn, key = step["turn"], (step["timestamp"], position, step["step_id"])
            known = first.get(turn) or self.first.get(turn)
            if known is None or key < known:
                if known is not None and known[1] < self.steps:
                    return None
                first[turn] = key
                turns.add(turn)
            if step["step_type"] == "claim" and self.finals.get(turn, self.steps) < self.steps:
                return None
        return turns

    def _take(self, inputs: list[dict[str, Any]], memories: list[str],
              steps: list[dict[str, Any]]) -> None:
        """Count the records as stored and remember what later extensions look up."""
        name = self.names.get
        for u in inputs:
            self.kinds[name(u["input_id"], u["input_id"])] = NodeKind.USER_INPUT
            self.inputs_of.setdefault(u["turn"], []).append(name(u["input_id"], u["input_id"]))
        for m in memories:
            self.kinds[self.names.get(m, m)] = NodeKind.MEMORY
            self.positions[m] = self.memories
            self.memories += 1
        for position, step in enumerate(steps, self.steps):
            step_id = name(step["step_id"], step["step_id"])
            self.kinds[step_id] = NodeKind.STEP
            key = (step["timestamp"], position, step_id)
            if step["turn"] not in self.first or key < self.first[step["turn"]]:
                self.first[step["turn"]] = key
            if step["step_type"] == "claim":
                self.finals[step["turn"]] = position
        self.inputs += len(inputs)
        self.steps += len(steps)

    def _extension(self, inputs: list[dict[str, Any]], memories: list[str], changed: list[str],
                   steps: list[dict[str, Any]], initiate: list[int],
                   first_step: int = 0) -> Extension:
        builder = self.reading.builder
        nodes: list[dict[str, Any]] = []
        edges: list[Edge] = []
        start = self.inputs - len(inputs)
        for position, raw in enumerate(inputs, start):
            data = UserInput.model_validate(renamed(raw, self.names)).model_dump(mode="json")
            nodes.append(input_row_json(self.key, data, position))
        for placeholder in memories:
            record = self._record(placeholder)
            nodes.append(memory_row_json(self.key, record.model_dump(mode="json"),
                                         self.positions[placeholder]))
            edges.extend(memory_edges(record))
        rewritten = []
        for placeholder in changed:  # a status, or lineage a later search named (its edges)
            record = self._record(placeholder)
            rewritten.append(memory_row_json(self.key, record.model_dump(mode="json"),
                                             self.positions[placeholder]))
            edges.extend(memory_edges(record))
        for position, raw in enumerate(steps, first_step):
            named = renamed(raw, self.names)
            if named["step_type"] == "claim" and self.finals.get(named["turn"]) == position:
                named = {**named, "step_type": "final_answer"}
            step = ExecutionStep.model_validate(named)
            nodes.append(step_row_json(self.key, step.model_dump(mode="json"), position))
            edges.extend(step_edges(step, self.kinds.get))
        for turn in initiate:
            if turn in self.first:
                edges.extend(Edge(EdgeLabel.INITIATE, i, self.first[turn][2])
                             for i in self.inputs_of.get(turn, []))
        world = builder.world()  # its sources are keyed by our ids (their values name spans)
        world[SOURCES] = {self.names.get(k, k): v for k, v in world[SOURCES].items()}
        task = {"domain": builder.domain,
                "diagnosed_faults": [self.names.get(f, f) for f in
                                     builder.faults(self.reading.fault_ids())],
                "world_json": dumps(world), "warnings": list(world.get(WARNINGS, [])) or None,
                # the hash of the whole case changes with every request: a full rebuild
                # (or `provrepair ingest`) computes it again
                "content_hash": None}
        if builder.memory_namespace is not None:  # as provenance/rows.task_props writes it
            task["memory_namespace"] = builder.memory_namespace
        return Extension([{**row, "type": node_type(row["props"])} for row in nodes],
                         [edge_row(self.key, e) for e in dedupe(edges)], task, rewritten)

    def _record(self, placeholder: str) -> MemoryRecord:
        """A record of the reading, as stored: ids named, a version's agent id kept."""
        raw = renamed(self.reading.builder.memories[placeholder], self.names)
        if placeholder in self.reading.builder.unnamed:
            raw = {**raw, "record_id": self.reading.builder.unnamed[placeholder]}
        return MemoryRecord.model_validate(raw)
