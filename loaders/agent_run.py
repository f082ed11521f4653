"""One agent run, as the outside formats describe it, → a case (docs/case-format.md).

The OpenTelemetry and transcript loaders turn their input into the events below, in time
order; `RunBuilder` turns the events into records, ids, edges-to-be and statuses, the same
way for both (README, "Recording your agent", has the mapping table).

Dependencies (docs/method.md §2 follows them):
- conservative (default): a model output or a memory write depends on everything that was in
  its context before it (user messages, memory records returned, tool results, earlier model
  outputs), none marked sufficient: contamination can be over-, never under-estimated;
- explicit: when the model returned evidence ids, exactly those, each marked sufficient.

Memory records keep the ids the agent used; an update or upsert of an existing record makes a
new version `<id>~2`, `<id>~3`… that supersedes the previous one and keeps the agent's id in
`record_id` (docs/case-format.md, "Agent ids"). Version ids are named when the case is built,
against every id of the run (provenance/ids.py), so a real record named `m_best~2` keeps its
id and the version takes the next free one. A record's final status is
what the run last observed: a record a later search still returns is active again, whatever
an earlier delete or update claimed (that mutation failed silently: the planner's seed).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from provrepair.provenance.errors import CaseError
from provrepair.provenance.ids import version_id
from provrepair.provenance.models import FORMAT, Case
from provrepair.provenance.validate import parse_case


@dataclass(frozen=True)
class UserMessage:
    text: str
    ts: int


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ModelOutput:
    text: str
    ts: int
    tool_calls: tuple[ToolCall, ...] = ()
    evidence: tuple[str, ...] | None = None  # explicit evidence ids, when the model gave them


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    content: str
    ts: int
    error: bool = False


@dataclass(frozen=True)
class MemorySearch:
    records: tuple[tuple[str, str], ...]  # (record id, content) as returned
    ts: int
    query: str = ""


@dataclass(frozen=True)
class MemoryWrite:
    op: str            # create | update | upsert | delete
    record_id: str
    content: str
    ts: int
    failed: bool = False


Event = UserMessage | ModelOutput | ToolResult | MemorySearch | MemoryWrite
MUTATION = {"create": "memory_write", "update": "memory_update", "upsert": "memory_update",
            "delete": "memory_delete"}


@dataclass
class RunBuilder:
    task_id: str
    domain: str = "agent"
    session: list[dict[str, Any]] = field(default_factory=list)
    memories: dict[str, dict[str, Any]] = field(default_factory=dict)  # version id → record
    versions: dict[str, list[str]] = field(default_factory=dict)       # record id → versions
    trace: list[dict[str, Any]] = field(default_factory=list)
    context: list[str] = field(default_factory=list)  # ids an inference step has seen
    actions: dict[str, str] = field(default_factory=dict)  # tool call id → action step id
    observations: dict[str, str] = field(default_factory=dict)  # call id → observation id
    unnamed: dict[str, str] = field(default_factory=dict)  # placeholder → record id (versions)

    def add(self, event: Event) -> None:
        if isinstance(event, UserMessage):
            self._user(event)
        elif isinstance(event, ModelOutput):
            self._model(event)
        elif isinstance(event, ToolResult):
            self._tool_result(event)
        elif isinstance(event, MemorySearch):
            self._search(event)
        else:
            self._mutation(event)

    def case(self, diagnosed_faults: list[str]) -> Case:
        """The run as a validated case; faults may name a record id (its current version)."""
        self._mark_final_answers()
        faults = [self.current(f) if f in self.versions else f for f in diagnosed_faults]
        return parse_case(self._named_versions({
            "format": FORMAT, "task_id": self.task_id, "domain": self.domain,
            "session": self.session, "memory_store": list(self.memories.values()),
            "trace": self.trace, "diagnosed_faults": faults}))

    def current(self, record_id: str) -> str:
        return self.versions[record_id][-1]

    # -- events ---------------------------------------------------------------------------

    def _user(self, event: UserMessage) -> None:
        input_id = f"u_{len(self.session) + 1:03d}"
        self.session.append({"input_id": input_id, "task_id": self.task_id,
                             "turn": len(self.session) + 1, "content": event.text,
                             "timestamp": event.ts})
        self.context.append(input_id)

    def _model(self, event: ModelOutput) -> None:
        used, sufficient = self._dependencies(event)
        step = self._step("plan" if event.tool_calls else "claim", event.text, event.ts,
                          used, sufficient)
        for call in event.tool_calls:
            action = self._step("tool_action", f"{call.name}({_args(call.arguments)})",
                                event.ts, [step], [], tool_name=call.name,
                                tool_args=call.arguments)
            self.actions[call.call_id] = action
        self.context.append(step)

    def _tool_result(self, event: ToolResult) -> None:
        action = self.actions.get(event.call_id)
        if action is None:
            raise CaseError(self.task_id, "tool_call_id", event.call_id,
                            "a tool result whose call was never made (orphan tool result)")
        step = self._step("tool_observation", event.content, event.ts, [action], [],
                          status="error" if event.error else "ok")
        self.observations[event.call_id] = step
        self.context.append(step)

    def _search(self, event: MemorySearch) -> None:
        found = [self._returned(record_id, content, event.ts)
                 for record_id, content in event.records]
        self._step("memory_read", f"Retrieved: {', '.join(found) or 'nothing'}"
                   + (f" (query: {event.query})" if event.query else ""), event.ts, found, [])
        self.context.extend(m for m in found if m not in self.context)

    def _mutation(self, event: MemoryWrite) -> None:
        known = event.record_id in self.versions
        op = "create" if event.op == "upsert" and not known else event.op
        if op in ("update", "delete") and not known:
            self._root(event.record_id, event.content, event.ts)  # existed before the run
        old = self.current(event.record_id) if op != "create" else None
        step_id = f"s_{len(self.trace) + 1:03d}"
        new = None if op == "delete" or event.failed else self._version(event.record_id)
        self._step(MUTATION[op], event.content or f"{op} {event.record_id}", event.ts,
                   list(self.context), [], invalidated=[old] if old else [],
                   generated=[new] if new else [], status="error" if event.failed else "ok")
        if event.failed:
            return
        if old is not None:
            self._set_status(old, "deleted" if op == "delete" else "superseded", step_id)
        if new is not None:
            self.memories[new] = self._record(new, event.content, event.ts, step_id, old)

    # -- records and steps -----------------------------------------------------------------

    def _returned(self, record_id: str, content: str, ts: int) -> str:
        """The version a search returned (by content, else the current one), active again."""
        if record_id not in self.versions:
            return self._root(record_id, content, ts)
        match = [v for v in self.versions[record_id] if self.memories[v]["content"] == content]
        version = match[-1] if match else self.current(record_id)
        self._set_status(version, "active", None)
        return version

    def _root(self, record_id: str, content: str, ts: int) -> str:
        """A record the run did not write (it was in the store before): a root record."""
        version = self._version(record_id)
        self.memories[version] = self._record(version, content, ts, None, None)
        return version

    def _version(self, record_id: str) -> str:
        """The record's first version keeps the agent's id; a later one gets a placeholder
        until every id of the run is known (`_named_versions`)."""
        versions = self.versions.setdefault(record_id, [])
        version = record_id
        if versions:
            version = f"\x00v{len(self.unnamed)}\x00"
            self.unnamed[version] = record_id
        versions.append(version)
        return version

    def _named_versions(self, case: dict[str, Any]) -> dict[str, Any]:
        """Placeholders → version ids allocated against every id of the run (inputs, steps,
        the agent's record ids), in the order the versions were made; each version keeps its
        agent id in `record_id`."""
        taken = {*(u["input_id"] for u in self.session), *(s["step_id"] for s in self.trace),
                 *(m for m in self.memories if m not in self.unnamed)}
        names = {p: version_id(agent, taken) for p, agent in self.unnamed.items()}
        for record in case["memory_store"]:
            if record["memory_id"] in self.unnamed:
                record["record_id"] = self.unnamed[record["memory_id"]]
        named: dict[str, Any] = _renamed(case, names)
        return named

    def _record(self, memory_id: str, content: str, ts: int, by: str | None,
                supersedes: str | None) -> dict[str, Any]:
        return {"memory_id": memory_id, "task_id": self.task_id, "content": content,
                "source": "agent_summary", "last_modified_by": by, "created_at": ts,
                "last_modified_at": ts, "derived_from": [], "supersedes": supersedes,
                "status": "active", "sufficient_from": []}

    def _set_status(self, memory_id: str, status: str, by: str | None) -> None:
        record = self.memories[memory_id]
        if record["status"] != status:
            record["status"] = status
            record["last_modified_by"] = by if by is not None else record["last_modified_by"]

    def _step(self, step_type: str, content: str, ts: int, used: list[str],
              sufficient: list[str], *, invalidated: list[str] | None = None,
              generated: list[str] | None = None, status: str = "ok",
              tool_name: str | None = None, tool_args: dict[str, Any] | None = None) -> str:
        turn = max(1, len(self.session))
        step_id = f"s_{len(self.trace) + 1:03d}"
        prev = [s for s in self.trace if s["turn"] == turn][-1:]
        for p in prev:
            p["next_step_ids"].append(step_id)
        self.trace.append({
            "step_id": step_id, "task_id": self.task_id, "step_type": step_type,
            "content": content, "prev_step_ids": [p["step_id"] for p in prev],
            "next_step_ids": [], "invalidated_memory_ids": invalidated or [],
            "generated_memory_ids": generated or [], "used_ids": list(dict.fromkeys(used)),
            "sufficient_ids": sufficient, "timestamp": ts, "turn": turn, "status": status,
            "tool_name": tool_name, "tool_args": tool_args})
        return step_id

    def _dependencies(self, event: ModelOutput) -> tuple[list[str], list[str]]:
        if event.evidence is None:
            return list(self.context), []
        used = [self._evidence_id(e) for e in event.evidence]
        return used, used

    def _evidence_id(self, evidence: str) -> str:
        """An evidence id as the model wrote it: a memory record id, a tool call id, or one of
        our own ids (u_001, s_004)."""
        if evidence in self.versions:
            return self.current(evidence)
        if evidence in self.observations:
            return self.observations[evidence]
        if evidence in self.context:
            return evidence
        raise CaseError(self.task_id, "evidence", evidence,
                        "names nothing the model had in its context")

    def _mark_final_answers(self) -> None:
        """The last model output of each user turn without a tool call is the turn's answer."""
        last: dict[int, dict[str, Any]] = {}
        for step in self.trace:
            if step["step_type"] == "claim":
                last[step["turn"]] = step
        for step in last.values():
            step["step_type"] = "final_answer"


_PLACEHOLDER = re.compile("\x00v[0-9]+\x00")


def _renamed(value: Any, names: dict[str, str]) -> Any:
    """`value` with every version placeholder replaced by its id (in ids and in the texts that
    name them, such as a memory read's "Retrieved: …")."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: names.get(m.group(0), m.group(0)), value) \
            if "\x00" in value else value
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _renamed(v, names) for k, v in value.items()}
    return value


def _args(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in sorted(arguments.items()))
