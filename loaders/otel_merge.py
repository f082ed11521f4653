"""A repaired conversation read again whole, merged into its stored task (issue 36).

Live capture reads a conversation again from its journal when a trace cannot simply extend
what is stored (loaders/otel_runs.py: another process wrote the task since, a recovered or
content-less trace, spans that change what is stored). A task no repair touched is then
replaced. A repaired one is not: replacing it would drop the repair's runs, marks and replayed
nodes, and bring back the records it deleted. The new reading is merged into it instead, so
the trace is stored and the next plan sees it:

- Each node of the reading is matched to the recorded node it is: a step or input by where it
  came from (`world["provrepair.sources"]`: its span, `call <id>`; else its content), a
  record by the agent's id, a later version by (agent id, content); the k-th of equal keys to
  the k-th. A matched node keeps its stored id.
- A node not matched is new: it keeps the id a reading alone gives it when no stored node
  has that id (a repair's included), else it gets the next free one. A record the agent named
  like a stored node of ours (`s_004`) gets a version id (`s_004~2`) that keeps the agent's in
  `record_id`.
- A matched node keeps its stored properties; what the reading adds to it is added (chain
  successors, dependencies and lineage: list fields, with their edges; a sufficient mark only
  on a dependency new to it); a record takes the reading's status unless a repair set one
  (cypher/capture/merge_captured_memories.cypher: the repair's stays, the run's is kept as
  `status_recorded`).
- Every edge of the reading not stored is added: a dependency is never dropped, one the
  stored task has and the reading not stays (an over-approximation, as the brief allows).
Where the reading changes a recorded node otherwise (a final answer that is no longer one,
a step read at another place in the history, a version that never existed), the stored node
stays as the repair saw it and the task gets a warning (`REPLAN`): plan it again. When the
merge changed nothing that way (`Merge.exact`), the store holds the reading, ids and all, up
to the statuses a repair set, and live capture extends it from then on.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from provrepair.loaders.agent_run import SOURCES, WARNINGS, renamed
from provrepair.loaders.otel import RunReading
from provrepair.provenance.edges import NodeKind, derive_edges
from provrepair.provenance.models import Case
from provrepair.provenance.rows import (
    dumps,
    edge_row,
    input_row_json,
    memory_row_json,
    node_type,
    record_from_props,
    step_row_json,
)
from provrepair.provenance.state.memory import allocate_id, version_id
from provrepair.provenance.state.runs import recorded_status
from provrepair.provenance.validate import parse_case

# How the merge's own warnings start: the journal cannot say them again, so a later merge
# keeps them (the reading's warnings are read again from the journal each time).
REPLAN = "spans read after a repair"
ID_FIELD = {NodeKind.USER_INPUT: "input_id", NodeKind.MEMORY: "memory_id",
            NodeKind.STEP: "step_id"}
LISTS = ("prev_step_ids", "next_step_ids", "invalidated_memory_ids", "generated_memory_ids",
         "used_ids", "derived_from")
SUFFICIENT = {"sufficient_ids": "used_ids", "sufficient_from": "derived_from"}
MEMORY_NEWS = ("status", "last_modified_by", "last_modified_at")  # a record's, as the run left it
Key = tuple[str, ...]


@dataclass(frozen=True)
class Stored:
    """What the store holds of the task: its record, every node's properties (those a repair
    wrote too) and its edges as (label, source id, target id)."""

    task: dict[str, Any]
    nodes: list[dict[str, Any]]
    edges: set[tuple[str, str, str]]


@dataclass(frozen=True)
class Merge:
    """What the reading adds to the stored task: new node rows ({uid, type, props}), stored
    steps and inputs whose lists grew (the same rows, their stored labels), stored records
    the reading changed (cypher/capture/merge_captured_memories.cypher), edge rows and the
    task record's properties. `kept`: recorded nodes the reading reads otherwise, kept."""

    nodes: list[dict[str, Any]]
    grown: list[dict[str, Any]]
    changed: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    task: dict[str, Any]
    kept: list[str]
    exact: bool


def merge_reading(key: str, stored: Stored, reading: RunReading, warnings: list[str]
                  ) -> Merge:
    """The reading of every span of the conversation (`warnings`: what reading them said
    beyond the builder) merged into the stored task (module docstring)."""
    builder = reading.builder
    default = builder.names()  # placeholder → the id a reading alone gives
    ours = reading.case()
    recorded = {p["id"]: p for p in stored.nodes if "origin_run" not in p}
    world = json.loads(stored.task.get("world_json") or "{}")
    matched = _match(ours, {p["id"]: p for p in stored.nodes}, world.get(SOURCES, {}))
    stored_ids = {p["id"] for p in stored.nodes}
    taken = stored_ids | builder.taken_ids()
    names = {p: matched[d] for p, d in default.items() if d in matched}
    for placeholder, named in default.items():
        if placeholder in names:
            continue
        if named in taken:
            named = (allocate_id(builder.ours[placeholder], taken) if placeholder in builder.ours
                     else version_id(builder.unnamed[placeholder], taken))
        taken.add(named)
        names[placeholder] = named
    moved = {}  # agent record ids that name a stored node of ours: moved to a version id
    for record in sorted(builder.taken_ids()):
        if matched.get(record, record) != record:  # moved by an earlier merge
            moved[record] = matched[record]
        elif record in stored_ids and record not in matched:
            moved[record] = version_id(record, taken)
    case = parse_case(renamed(_moved(builder.case_json(reading.fault_ids()), moved), names))
    rows = _rows(key, case.model_dump(mode="json"), recorded)
    unmatched = sorted(set(recorded) - set(matched.values()))
    kept = rows.kept + unmatched
    edges = [edge_row(key, e) for e in derive_edges(case)
             if (e.label.value, e.src, e.dst) not in stored.edges]
    # one note, said again by each merge while stored nodes differ from the reading
    notes = [f"{REPLAN} changed {len(kept)} node(s) recorded before them (e.g. "
             f"{', '.join(kept[:3])}): they are kept as the repair saw them, the new steps "
             "stored beside them; plan the task again (`provrepair plan`): the repair's plan "
             "did not see them"] if kept else [
        w for w in world.get(WARNINGS, []) if w.startswith(REPLAN)]
    said = list(dict.fromkeys([*case.world.get(WARNINGS, []), *warnings, *notes]))
    sources = {**case.world.get(SOURCES, {}),
               **{k: v for k, v in world.get(SOURCES, {}).items() if k in stored_ids}}
    task = {"domain": case.domain, "diagnosed_faults": list(case.diagnosed_faults),
            "world_json": dumps({**case.world, SOURCES: sources,
                                 **({WARNINGS: said} if said else {})}),
            "warnings": said or None, "content_hash": None}
    if case.memory_namespace is not None:
        task["memory_namespace"] = case.memory_namespace
    exact = not kept and not moved and names == default
    return Merge(rows.nodes, rows.grown, rows.changed, edges, task, kept, exact)


def _match(case: Case, stored: dict[str, dict[str, Any]], sources: dict[str, str]
           ) -> dict[str, str]:
    """The reading's id → the stored id of the same recorded node (module docstring);
    `stored`: every stored node by id."""
    ours = _numbered(
        [(u.input_id, ("u", case.world[SOURCES].get(u.input_id, ""), u.content))
         for u in case.session]
        + [(m.memory_id, _memory_key(m.memory_id, m.record_id, m.content, stored))
           for m in case.memory_store]
        + [(s.step_id, _step_key(case.world[SOURCES].get(s.step_id, ""), s.content))
           for s in case.trace])
    nodes = sorted((p for p in stored.values() if "origin_run" not in p),
                   key=lambda p: (p["kind"], p["position"]))
    theirs = _numbered((p["id"], _stored_key(p, sources.get(p["id"], ""))) for p in nodes)
    return {node_id: theirs[key] for key, node_id in ours.items() if key in theirs}


def _stored_key(props: dict[str, Any], source: str) -> Key:
    if props["kind"] == NodeKind.MEMORY:
        return _memory_key(props["id"], props.get("record_id"), props["content"], None)
    if props["kind"] == NodeKind.STEP:
        return _step_key(source, props["content"])
    return "u", source, props["content"]


def _memory_key(memory_id: str, record_id: str | None, content: str,
                stored: dict[str, dict[str, Any]] | None) -> Key:
    """A record by the agent's id; a later version by that id and its content, and so a
    record of the reading whose agent id names a stored node other than a recorded root
    record (`stored`: every stored node by id; a merge moves that record to a version id)."""
    if record_id is None and stored is not None:
        node = stored.get(memory_id)
        if node is not None and (node["kind"] != NodeKind.MEMORY or node.get("record_id")
                                 or "origin_run" in node):
            record_id = memory_id
    return ("m", memory_id) if record_id is None else ("v", record_id, content)


def _step_key(source: str, content: str) -> Key:
    """A step by where it came from (a span, a call); one read from no span by its content."""
    return ("s", source) if source else ("s", "", content)


def _numbered(nodes: Iterable[tuple[str, Key]]) -> dict[Key, str]:
    """Each key numbered by its occurrence (the k-th of equal keys), → the node's id."""
    seen: Counter[Key] = Counter()
    out = {}
    for node_id, key in nodes:
        seen[key] += 1
        out[(*key, str(seen[key]))] = node_id
    return out


def _moved(case: dict[str, Any], moved: dict[str, str]) -> dict[str, Any]:
    """The case's JSON (our ids still placeholders) with each agent record id that names a
    stored node of another kind moved to a version id; the record keeps the agent's id in
    `record_id`."""
    if not moved:
        return case

    def one(node_id: str | None) -> str | None:
        return moved.get(node_id, node_id) if node_id is not None else None

    for record in case["memory_store"]:
        if record["memory_id"] in moved:
            record["record_id"] = record["memory_id"]
            record["memory_id"] = moved[record["memory_id"]]
        record["supersedes"] = one(record["supersedes"])
        for name in ("derived_from", "sufficient_from"):
            record[name] = [moved.get(i, i) for i in record[name]]
    for step in case["trace"]:
        for name in (*LISTS[:-1], "sufficient_ids"):
            step[name] = [moved.get(i, i) for i in step[name]]
    case["diagnosed_faults"] = [moved.get(i, i) for i in case["diagnosed_faults"]]
    return case


@dataclass
class _Rows:
    nodes: list[dict[str, Any]]
    grown: list[dict[str, Any]]
    changed: list[dict[str, Any]]
    kept: list[str]


def _rows(key: str, case: dict[str, Any], recorded: dict[str, dict[str, Any]]) -> _Rows:
    """The case's nodes against the recorded ones (stored ids are the matched ones): new
    rows after every recorded position of their kind, stored rows merged."""
    out = _Rows([], [], [], [])
    for kind, records, row_of in ((NodeKind.USER_INPUT, case["session"], input_row_json),
                                  (NodeKind.MEMORY, case["memory_store"], memory_row_json),
                                  (NodeKind.STEP, case["trace"], step_row_json)):
        position = 1 + max((p["position"] for p in recorded.values() if p["kind"] == kind),
                           default=-1)
        for record in records:
            props = recorded.get(record[ID_FIELD[kind]])
            if props is None:
                row = row_of(key, record, position)
                out.nodes.append({**row, "type": node_type(row["props"])})
                position += 1
                continue
            old = record_from_props({**props, "status": recorded_status(props)}
                                    if kind == NodeKind.MEMORY else props).model_dump(mode="json")
            merged = _merged(old, record, kind == NodeKind.MEMORY)
            if merged != record:
                out.kept.append(record[ID_FIELD[kind]])
            if merged == old:
                continue
            row = row_of(key, merged, props["position"])
            if kind == NodeKind.MEMORY:
                out.changed.append(row)
            else:
                out.grown.append({**row, "type": node_type(props)})
    return out


def _merged(old: dict[str, Any], new: dict[str, Any], memory: bool) -> dict[str, Any]:
    """A stored record with what the reading adds to it: list fields grow; a sufficient mark
    only on a dependency new to it; a record's status (and who set it) is the reading's, and
    the lineage a later search gave it."""
    out = dict(old)
    for name in LISTS:
        if name in old:
            out[name] = list(dict.fromkeys([*old[name], *new[name]]))
    for name, whole in SUFFICIENT.items():
        if name in old:
            out[name] = [*old[name], *(i for i in new[name] if i not in old[whole])]
    if memory:
        out.update({name: new[name] for name in MEMORY_NEWS})
        out["supersedes"] = old["supersedes"] or new["supersedes"]
    return out
