"""One agent run, as the outside formats describe it, → a case (docs/case-format.md).

The OpenTelemetry and transcript loaders turn their input into the events below, in time
order; `RunBuilder` turns the events into records, ids, edges-to-be and statuses, the same
way for both (README, "Recording your agent", has the mapping table).

Dependencies: the context window (docs/method.md §2 follows them). What a model output can
depend on is exactly what was in its input:
- a model output depends on every item its recorded input messages carry (`Context`): user
  turns, earlier model outputs and tool calls, tool results, memory records however they
  entered (named by id in a message part, their content shown in a message, or returned by a
  search since the previous model output), and nothing else; none marked sufficient;
- explicit: when the model returned evidence ids, exactly those, each marked sufficient;
- where the input was not captured (`context=None`), everything earlier in the conversation,
  and the case says so (`world["provrepair.warnings"]`);
- a memory write depends on the ids it names itself (`evidence`: exactly those, with what its
  span points at), else on what its span points at (parent, links: `refs`) AND the latest
  model output with what arrived since (the output whose content it stores; an enclosing
  span adds dependencies, never narrows them), and on its `derived_from` sources;
- a tool result depends on its call and on everything read or made between the call and the
  result (a sub-agent or a search the tool ran inside its span), and the next model output
  reads it.

Soundness by construction (issue 36): any earlier output (a model's text or reasoning, a
tool call's string arguments, a tool result, a record's content) whose text reappears as a
whole in a later input (any message of a request, whatever its role; a tool result; what a
write stores) is a dependency of it (`_shown`); a memory operation is ONE step whatever the
number of records it reads or writes (the records written together are that step's output,
as the native recording has them); `derived_from` / `supersedes` are read wherever records
appear (a search's results too), and a record named only there is a node of its own.

Memory records keep the ids the agent used; an update or upsert of an existing record makes a
new version `<id>~2`, `<id>~3`… that supersedes the previous one and keeps the agent's id in
`record_id` (docs/case-format.md, "Agent ids"). Every id the loader makes (inputs `u_001`,
steps `s_001`, versions) is a placeholder until the case is built, then allocated against
every id the agent used (provenance/state/memory.py), so an agent record named `s_002` or
`m_best~2` keeps its id and ours takes the next free one. A record's final status is
what the run last observed: a record a later search still returns is active again, whatever
an earlier delete or update claimed (that mutation failed silently: the planner's seed), and
a version that update made is no longer active (it never took effect).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from provrepair.provenance.errors import CaseError
from provrepair.provenance.models import FORMAT, Case
from provrepair.provenance.rows import WARNINGS as WARNINGS  # re-exported: loaders use it
from provrepair.provenance.state.memory import VERSION_SEPARATOR, allocate_id, retired_status
from provrepair.provenance.validate import parse_case
from provrepair.provenance.vocab import MemoryStatus

# world keys: what the reading could not see (provenance/rows.py writes it on the task), and
SOURCES = "provrepair.sources"    # where each step and input came from (span id, message)
REASONING = "#reasoning"  # the source suffix of the plan step a model's reasoning becomes
INPUT_PREFIX, STEP_PREFIX = "u_", "s_"  # the ids the loader names its inputs and steps by


def value_text(value: Any) -> str:
    """A recorded value as text: a string as it is, anything structured as exact JSON (the
    same in every loader: the namespace plan knows a record's version by its content)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class UserMessage:
    text: str
    ts: int
    source: str | None = None


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Context:
    """What one model input carried, read from its messages (loaders map their shapes here)."""

    users: tuple[str, ...] = ()        # user message texts, in order
    outputs: tuple[str, ...] = ()      # texts of earlier assistant messages
    calls: tuple[str, ...] = ()        # ids of tool calls in earlier assistant messages
    results: tuple[tuple[str, str], ...] = ()  # (call id, content) of tool results
    records: tuple[str, ...] = ()      # memory record ids named in message parts
    texts: tuple[str, ...] = ()        # every other text (system, tool, reasoning…)
    # a transcript: the input is everything the previous output had, that output, and all
    # that happened since (the items above are read in addition)
    cumulative: bool = False


@dataclass(frozen=True)
class ModelOutput:
    text: str
    ts: int
    tool_calls: tuple[ToolCall, ...] = ()
    evidence: tuple[str, ...] | None = None  # explicit evidence ids, when the model gave them
    context: Context | None = None  # None: the input was not captured
    operation: str | None = None    # set for a generic step: the operation it was recorded as
    source: str | None = None
    reasoning: str = ""  # the model's reasoning before its output: a plan step of its own


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    content: str
    ts: int
    error: bool = False
    source: str | None = None


@dataclass(frozen=True)
class RecordSeen:
    """A memory record as an operation names it: returned by a search, or written."""

    record_id: str
    content: str = ""
    derived_from: tuple[str, ...] = ()  # record ids it consolidates
    supersedes: tuple[str, ...] = ()    # record ids it replaces


@dataclass(frozen=True)
class MemorySearch:
    records: tuple[RecordSeen, ...]  # as returned
    ts: int
    query: str = ""
    source: str | None = None


@dataclass(frozen=True)
class MemoryWrite:
    """One memory operation (create | update | upsert | delete) of one or more records: one
    step, whose output is every record it writes."""

    op: str
    records: tuple[RecordSeen, ...]
    ts: int
    failed: bool = False
    refs: tuple[str, ...] = ()          # sources it points at (span parent, span links)
    evidence: tuple[str, ...] = ()      # ids it names itself (records, tool calls, our ids)
    source: str | None = None


Event = UserMessage | ModelOutput | ToolResult | MemorySearch | MemoryWrite
MUTATION = {"create": "memory_write", "update": "memory_update", "upsert": "memory_update",
            "delete": "memory_delete"}
NO_TEXT = ("(tool calls)", "(no output recorded)")  # what an output without text is named


@dataclass
class _Anchor:
    """The latest model output and every item with a path to it: a later output whose input
    shows it depends on it plus what it does not cover (the same reach, linear edges)."""

    step: str
    context: set[str]
    chain: list[str]  # the outputs anchored on one another, oldest first, ending in `step`
    complete: bool = False  # `context` holds every item recorded before `step`

    def skips(self) -> list[str]:
        """Earlier outputs of the chain at distances 2, 4, 8… (as far as the new position
        divides): a path already runs through the chain, so reach is the same, but a fault
        early in a long conversation is found in a logarithmic number of hops, not one hop
        per output (the planner walks hop by hop)."""
        n, out, stride = len(self.chain), [], 2
        while n % stride == 0 and stride <= n:
            out.append(self.chain[n - stride])
            stride *= 2
        return out


@dataclass
class RunBuilder:
    task_id: str
    domain: str = "agent"
    memory_namespace: str | None = None  # the agent memory the run shares (case format)
    notes: list[str] = field(default_factory=list)  # warnings of the loader, for the case
    session: list[dict[str, Any]] = field(default_factory=list)
    memories: dict[str, dict[str, Any]] = field(default_factory=dict)  # version id → record
    versions: dict[str, list[str]] = field(default_factory=dict)       # record id → versions
    trace: list[dict[str, Any]] = field(default_factory=list)
    history: list[str] = field(default_factory=list)  # every id, in order (the fallback)
    since_anchor: list[str] = field(default_factory=list)  # ids since the latest anchor
    recent: list[str] = field(default_factory=list)   # ids since the latest model output
    retrieved: list[str] = field(default_factory=list)  # searches (and records) since then
    actions: dict[str, str] = field(default_factory=dict)  # tool call id → action step id
    issuers: dict[str, str] = field(default_factory=dict)  # tool call id → output step id
    observations: dict[str, str] = field(default_factory=dict)  # call id → observation id
    called_at: dict[str, int] = field(default_factory=dict)  # call id → len(history) then
    outputs: dict[str, str] = field(default_factory=dict)  # output text → latest step id
    users: dict[str, list[int]] = field(default_factory=dict)  # user text → session positions
    sources: dict[str, str] = field(default_factory=dict)  # our id → where it came from
    by_source: dict[str, str] = field(default_factory=dict)  # source → first step id
    uncaptured: list[str] = field(default_factory=list)  # outputs read without their input
    anchor: _Anchor | None = None
    _matched: dict[str, tuple[int, list[str]]] = field(default_factory=dict)  # text cache
    _said: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (item, forms)
    _heads: dict[str, list[int]] = field(default_factory=dict)  # a form's head → _said index
    _head_sizes: set[int] = field(default_factory=set)  # the lengths of those heads
    # ids the loader makes are placeholders until the case is built (`names`): ours
    # (placeholder → prefix) and record versions (placeholder → the agent's record id)
    ours: dict[str, str] = field(default_factory=dict)
    unnamed: dict[str, str] = field(default_factory=dict)
    provisional: dict[str, str] = field(default_factory=dict)  # u_001, s_004 → placeholder
    touched: set[str] = field(default_factory=set)  # records whose status changed (live capture)
    withdrawn: set[str] = field(default_factory=set)  # versions taken back (live capture)
    _versions_made: int = 0

    def add(self, event: Event) -> None:
        if isinstance(event, UserMessage):
            self._user(event.text, event.ts, event.source)
        elif isinstance(event, ModelOutput):
            self._model(event)
        elif isinstance(event, ToolResult):
            self._tool_result(event)
        elif isinstance(event, MemorySearch):
            self._search(event)
        else:
            self._mutation(event)

    def case(self, diagnosed_faults: list[str]) -> Case:
        """The run as a validated case; faults may name a record id (its current version).
        The builder is left as it was: more events may follow (live capture extends a run,
        loaders/otel_extend.py), and the case of the longer run is read the same way."""
        named: dict[str, Any] = renamed(self.case_json(diagnosed_faults), self.names())
        return parse_case(named)

    def case_json(self, diagnosed_faults: list[str]) -> dict[str, Any]:
        """The case's JSON, the ids the loader made still placeholders (`names` names them;
        live capture merging a reading into a repaired task names them its own way,
        loaders/otel_merge.py); each version keeps its agent id in `record_id`."""
        trace = [dict(step) for step in self.trace]
        mark_final_answers(trace)
        memories = [dict(m) for m in self.memories.values()]
        for record in memories:
            if record["memory_id"] in self.unnamed:
                record["record_id"] = self.unnamed[record["memory_id"]]
        return {
            "format": FORMAT, "task_id": self.task_id, "domain": self.domain,
            "session": self.session, "memory_store": memories,
            "trace": trace, "diagnosed_faults": self.faults(diagnosed_faults),
            "world": self.world(),
            **({"memory_namespace": self.memory_namespace}
               if self.memory_namespace is not None else {})}

    def faults(self, diagnosed_faults: list[str]) -> list[str]:
        """Faults as the case names them: a record id means its current version."""
        return [self.current(f) if f in self.versions else f for f in diagnosed_faults]

    def world(self) -> dict[str, Any]:
        """The case's `world`: where each item came from, and what the reading missed."""
        world: dict[str, Any] = {SOURCES: self.sources}
        if self.notes:
            world[WARNINGS] = list(self.notes)
        if self.uncaptured:
            world[WARNINGS] = [*world.get(WARNINGS, []),
                f"{len(self.uncaptured)} model output(s) without recorded input messages "
                f"(first: {self.uncaptured[0]}): each depends on everything earlier in the "
                "conversation"]
        return world

    def current(self, record_id: str) -> str:
        return self.versions[record_id][-1]

    # -- ids ------------------------------------------------------------------------------

    def taken_ids(self) -> set[str]:
        """Every id the agent named: its record ids (ours are placeholders until named)."""
        return {m for m in self.memories if m not in self.unnamed}

    def names(self, names: dict[str, str] | None = None, taken: set[str] | None = None,
              starts: dict[str, int] | None = None) -> dict[str, str]:
        """Placeholder → id for every id the loader made: those in `names` kept (the dict is
        filled in place), each new one allocated in the order made against `taken` (default:
        every id the agent named; given, it holds the ids in `names` too, and the new ones are
        added). Inputs, steps and versions have prefixes of their own, so each kind is
        numbered as if alone; `starts` (prefix → the number to try first, kept by a caller
        naming in steps) makes each allocation start past the last one of its prefix."""
        names = {} if names is None else names
        taken = self.taken_ids() if taken is None else taken
        starts = {} if starts is None else starts
        for placeholder, prefix in self.ours.items():
            if placeholder not in names:
                names[placeholder] = self._allocate(prefix, taken, starts, 1, 3)
        for placeholder, agent_id in self.unnamed.items():
            if placeholder not in names:  # `version_id`'s shape: <agent id>~N from 2
                names[placeholder] = self._allocate(f"{agent_id}{VERSION_SEPARATOR}", taken,
                                                    starts, 2, 1)
        return names

    @staticmethod
    def _allocate(prefix: str, taken: set[str], starts: dict[str, int], first: int,
                  width: int) -> str:
        """`allocate_id` from where the prefix's last allocation left off: each id is the
        first free one past the previous (the same ids as from `first`, without walking
        every taken number again: a record updated 1,000 times)."""
        name = allocate_id(prefix, taken, start=starts.get(prefix, first), width=width)
        starts[prefix] = int(name[len(prefix):]) + 1
        return name

    def _next_step(self) -> str:
        """The placeholder of the next step made (its final id is named with the case)."""
        return f"\x00s{len(self.trace) + 1}\x00"

    # -- events ---------------------------------------------------------------------------

    def _user(self, text: str, ts: int, source: str | None) -> str:
        n = len(self.session) + 1
        input_id = f"\x00u{n}\x00"
        self.ours[input_id] = INPUT_PREFIX
        self.provisional[f"{INPUT_PREFIX}{n:03d}"] = input_id
        self.users.setdefault(text, []).append(len(self.session))
        self.session.append({"input_id": input_id, "task_id": self.task_id,
                             "turn": n, "content": text, "timestamp": ts})
        self._seen(input_id, source)
        return input_id

    def _model(self, event: ModelOutput) -> None:
        used, sufficient = self._dependencies(event)
        if event.reasoning:  # what the model thought first: a plan step the output follows
            source = f"{event.source}{REASONING}" if event.source is not None else None
            plan = self._step("plan", event.reasoning, event.ts, used, sufficient,
                              source=source)
            self._say(plan, event.reasoning)
            self._remember(plan)
            used, sufficient = [plan], []
        step_type = "plan" if event.tool_calls or event.operation else "claim"
        text = f"{event.operation}: {event.text}" if event.operation else event.text
        step = self._step(step_type, text, event.ts, used, sufficient, source=event.source)
        if event.reasoning and self.anchor is not None and self.anchor.step == used[0]:
            self.anchor.step = self.anchor.chain[-1] = step  # the output ends the chain
        if event.text not in NO_TEXT:
            self._say(step, event.text)
        for call in event.tool_calls:
            action = self._step("tool_action", f"{call.name}({_args(call.arguments)})",
                                event.ts, [step], [], tool_name=call.name,
                                tool_args=call.arguments, source=f"call {call.call_id}")
            self.actions[call.call_id] = action
            self.issuers[call.call_id] = step
            for value in _strings(call.arguments):
                self._say(action, value)
            self._remember(action)
        self.outputs[event.text] = step
        self._remember(step)
        for call in event.tool_calls:
            self.called_at[call.call_id] = len(self.history)
        self.recent, self.retrieved = [], []

    def _tool_result(self, event: ToolResult) -> None:
        """A tool's result depends on its call, on any earlier output it carries (a
        sub-agent's answer), and on everything read or made between the call and the result
        (a sub-agent or a memory search the tool ran: spans nested in the tool's, whatever
        its result shows of them; over-approximated: other calls' results excepted)."""
        action = self.actions.get(event.call_id)
        if action is None:
            raise CaseError(self.task_id, "tool_call_id", event.call_id,
                            "a tool result whose call was never made (orphan tool result)")
        mark = self.called_at.get(event.call_id, len(self.history))
        siblings = {self.observations[c] for c, at in self.called_at.items()
                    if at <= mark and c in self.observations}
        inside = [i for i in self.history[mark:] if i not in siblings]
        step = self._step("tool_observation", event.content, event.ts,
                          [action, *self._shown(event.content), *inside], [],
                          status="error" if event.error else "ok", source=event.source)
        self.observations[event.call_id] = step
        self._say(step, event.content)
        self._seen_now(step)
        if inside:  # the tool worked (a sub-agent's output reset what is recent): the next
            self.retrieved.append(step)  # model output reads its result, whatever it shows

    def _search(self, event: MemorySearch) -> None:
        found = list(dict.fromkeys(self._returned(record, event.ts) for record in event.records))
        step = self._step("memory_read", f"Retrieved: {', '.join(found) or 'nothing'}"
                          + (f" (query: {event.query})" if event.query else ""), event.ts,
                          found, [], source=event.source)
        for item in [step, *found]:
            self._seen_now(item)
            self.retrieved.append(item)

    def _mutation(self, event: MemoryWrite) -> None:
        """One step for the whole operation: it invalidates every record any of its records
        replaces and generates every record it writes (none when it failed)."""
        step_id = self._next_step()
        used = self._write_dependencies(event)
        writes: list[tuple[RecordSeen, list[str], list[str]]] = []
        created = False
        for record in event.records:
            known = record.record_id in self.versions
            op = "create" if event.op == "upsert" and not known else event.op
            created = created or op == "create"
            if op in ("update", "delete") and not known and not record.supersedes:
                self._root(record.record_id, record.content, event.ts)  # existed before the run
            replaced = [self._known(r, event.ts) for r in record.supersedes]
            if not replaced and op != "create":
                replaced = [self.current(record.record_id)]
            sources = [self._known(r, event.ts) for r in record.derived_from]
            used += sources
            writes.append((record, replaced, sources))
        invalidated = list(dict.fromkeys(r for _, replaced, _ in writes for r in replaced))
        written = [] if event.op == "delete" or event.failed else [
            (self._version(record.record_id), record, replaced, sources)
            for record, replaced, sources in writes]
        merges = any(len(replaced) > 1 for _, replaced, _ in writes) or \
            len(invalidated) > max(len(written), 1)  # several records into fewer
        step_type = ("memory_delete" if event.op == "delete" else
                     "memory_write" if not invalidated else
                     "memory_consolidate" if merges else "memory_update")
        content = " ".join(r.content for r in event.records if r.content) or \
            f"{event.op} {', '.join(r.record_id for r in event.records)}"
        self._step(step_type, content, event.ts, used, [], invalidated=invalidated,
                   generated=[new for new, *_ in written],
                   status="error" if event.failed else "ok", source=event.source)
        self._remember(step_id)
        if self.anchor is not None and invalidated:  # see _against_anchor: named again later
            self.anchor.context.difference_update(invalidated)
            self.anchor.complete = False
        if event.failed:
            return
        retire = retired_status(step_type)  # provenance/state/memory.py
        if retire is not None:
            for old in invalidated:
                self._set_status(old, retire.value, step_id)
        for new, record, replaced, sources in written:
            self.memories[new] = self._record(new, record.content, event.ts, step_id,
                                              replaced[0] if replaced else None, sources)
            self._seen_now(new)

    # -- dependencies ---------------------------------------------------------------------

    def _dependencies(self, event: ModelOutput) -> tuple[list[str], list[str]]:
        if event.evidence is not None:
            used = [self._evidence_id(e) for e in event.evidence]
            return used, used
        if event.context is None:
            self.uncaptured.append(event.source or f"output at {event.ts}")
            if self.anchor is not None and self.anchor.complete:  # it covers all before it
                return self._against_anchor(self.since_anchor, shown=True, complete=True), []
            return self._against_anchor(list(dict.fromkeys(self.history)), complete=True), []
        if event.context.cumulative:
            return self._cumulative(self._window(event.context, event.ts)), []
        return self._against_anchor(self._window(event.context, event.ts)), []

    def _cumulative(self, items: list[str]) -> list[str]:
        """A transcript's messages are the context: everything before (the previous output,
        with what it covered) and what came since."""
        return self._against_anchor(list(dict.fromkeys([*items, *self.recent])), shown=True)

    def _window(self, ctx: Context, ts: int) -> list[str]:
        """Every item the input carried, plus what was retrieved since the last output."""
        items: list[str] = []
        pos = 0
        for text in ctx.users:  # a re-sent history names the same user turns again
            at = next((i for i in self.users.get(text, []) if i >= pos), None)
            if at is None:
                items.append(self._user(text, ts - 1, None))
                pos = len(self.session)
            else:
                items.append(self.session[at]["input_id"])
                pos = at + 1
        items += [self.outputs[t] for t in ctx.outputs if t in self.outputs]
        for call_id in ctx.calls:
            if call_id in self.actions:
                items += [self.issuers[call_id], self.actions[call_id]]
        for call_id, content in ctx.results:
            if call_id not in self.observations:  # the tool itself was not instrumented
                self._tool_result(ToolResult(call_id, content, ts - 1))
            items.append(self.observations[call_id])
        items += [self._known(r, ts - 1) for r in ctx.records]
        for text in (*ctx.users, *ctx.outputs, *ctx.texts):  # in any role: issue 36
            items += self._shown(text)
        items += self.retrieved
        return list(dict.fromkeys(items))

    def _shown(self, text: str) -> list[str]:
        """Earlier items whose text the given text shows as a whole (an output, its
        reasoning or call arguments, a tool result, a record's content; exactly, or
        JSON-escaped inside a structure), in the order they were made (ids must not depend
        on the hash seed). A text seen before is looked at again only against the items
        made since; a new one, through the index of what each item's text starts with (the
        cost of the text, not of the conversation)."""
        cached = self._matched.get(text)
        if cached is None:
            candidates = sorted({i for head in _heads(text, self._head_sizes)
                                 for i in self._heads.get(head, ())})
        else:
            candidates = list(range(cached[0], len(self._said)))
        found = list(cached[1]) if cached is not None else []
        found += [self._said[i][0] for i in candidates
                  if any(occurs_whole(form, text) for form in self._said[i][1])]
        self._matched[text] = (len(self._said), found)
        return found

    def _against_anchor(self, context: list[str], shown: bool = False,
                        complete: bool = False) -> list[str]:
        """The context as [previous output] + what it does not cover, when the previous
        output is in it (`shown`: a transcript, where it always is); else the context.

        Same reach as naming every item: an item the previous output covers has a path to
        it, and it to this step. One exception, kept exact: a record a mutation has touched
        since is named again (its fault seeds at the mutation, and reach enters no node
        older than the seed, so a path through an older output would not count)."""
        anchor, step = self.anchor, self._next_step()
        if anchor is not None and (shown or anchor.step in context):
            covered = anchor.context  # the old anchor is done with: grow its set in place
            used = [anchor.step, *anchor.skips(),
                    *(i for i in context if i not in covered and i != anchor.step)]
            covered.add(anchor.step)
            covered.update(context)
            anchor.chain.append(step)
            self.anchor = _Anchor(step, covered, anchor.chain, complete and anchor.complete)
            self.since_anchor = []
            return used
        self.anchor = _Anchor(step, set(context), [step], complete)
        self.since_anchor = []
        return context

    def _write_dependencies(self, event: MemoryWrite) -> list[str]:
        """Explicit evidence (its own references): exactly those, with what its span points
        at. Else what it points at (span parent, links) AND the latest model output with what
        arrived since it (the output whose content it stores): an enclosing span adds
        dependencies, never narrows them (a generic parent step is read at its start, before
        the children the write follows). And any earlier output its records' contents show."""
        named = [self.by_source[r] for r in event.refs if r in self.by_source]
        named += [self._evidence_id(e) for e in event.evidence]
        if not event.evidence:
            last = next((s["step_id"] for s in reversed(self.trace)
                         if s["step_type"] in ("claim", "plan")), None)
            named += ([last] if last else []) + self.recent
        for record in event.records:
            if record.content:
                named += self._shown(record.content)
        return list(dict.fromkeys(named))

    def _evidence_id(self, evidence: str) -> str:
        """An evidence id as the model wrote it: a memory record id, a tool call id, one of our
        own ids (u_001, s_004) naming a user message, an output or any other step, or where
        one came from (its span id, `messages[i]` of a transcript)."""
        if evidence in self.versions:
            return self.current(evidence)
        if evidence in self.observations:
            return self.observations[evidence]
        if evidence in self.provisional:  # our id, as it is named when the agent's are not
            return self.provisional[evidence]
        if evidence in self.by_source:  # a span id, `messages[3]`: where the item came from
            return self.by_source[evidence]
        raise CaseError(self.task_id, "evidence", evidence,
                        "names nothing the model had in its context")

    # -- records and steps -----------------------------------------------------------------

    def _say(self, item: str, text: str) -> None:
        """`item` said `text`: a later input showing it depends on the item (`_shown`)."""
        if text.strip():
            forms = tuple(dict.fromkeys((text, json.dumps(text, ensure_ascii=False)[1:-1])))
            for form in forms:
                self._heads.setdefault(form[:HEAD], []).append(len(self._said))
                self._head_sizes.add(min(len(form), HEAD))
            self._said.append((item, forms))

    def _seen(self, item: str, source: str | None) -> None:
        self.sources[item] = source or ""
        if source is not None:
            self.by_source.setdefault(source, item)
        self._seen_now(item)

    def _remember(self, item: str) -> None:
        self.history.append(item)
        self.since_anchor.append(item)

    def _seen_now(self, item: str) -> None:
        self._remember(item)
        self.recent.append(item)

    def _known(self, record_id: str, ts: int) -> str:
        """The current version of a record named by id; one the run never saw existed before
        it (a root, content unknown)."""
        if record_id in self.versions:
            return self.current(record_id)
        return self._root(record_id, "", ts)

    def _returned(self, record: RecordSeen, ts: int) -> str:
        """The version a search returned (by content), active again, with what it says it
        was derived from or replaced. A version made after it (an update the run recorded)
        did not take effect: no longer active, and later operations act on the returned one.
        Content the run holds no version of is a version written outside the run (another
        conversation's, repair/plan/namespace.py "Versions"), or the current one shown
        otherwise: a root version with that content, superseding the current one and derived
        from it (never fewer dependencies than the current one)."""
        if record.record_id not in self.versions:
            sources = [self._known(r, ts) for r in record.derived_from]
            replaced = [self._known(r, ts) for r in record.supersedes]
            version = self._root(record.record_id, record.content, ts, sources,
                                 replaced[0] if replaced else None)
            for old in replaced:
                self._set_status(old, MemoryStatus.SUPERSEDED.value, None)
            return version
        versions = self.versions[record.record_id]
        match = [v for v in versions if self.memories[v]["content"] == record.content]
        if not match:
            current = versions[-1]
            sources = [self._known(r, ts) for r in record.derived_from]
            version = self._root(record.record_id, record.content, ts,
                                 list(dict.fromkeys([current, *sources])), current)
            self._set_status(current, MemoryStatus.SUPERSEDED.value, None)
            return version
        version = match[-1]
        for phantom in versions[versions.index(version) + 1:]:
            if not self._withdraw(phantom):  # something read it: kept, no longer active
                self._set_status(phantom, MemoryStatus.SUPERSEDED.value, None)
        if version != versions[-1]:
            versions.remove(version)
            versions.append(version)
        sources = [s for s in (self._known(r, ts) for r in record.derived_from)
                   if s != version and s not in self.memories[version]["derived_from"]]
        if sources:
            self.memories[version]["derived_from"] += sources
            self.touched.add(version)
        self._set_status(version, MemoryStatus.ACTIVE.value, None)
        return version

    def _root(self, record_id: str, content: str, ts: int, derived_from: list[str] | None = None,
              supersedes: str | None = None) -> str:
        """A record the run did not write (it was in the store before): a root record."""
        version = self._version(record_id)
        self.memories[version] = self._record(version, content, ts, None, supersedes,
                                              derived_from or [])
        return version

    def _version(self, record_id: str) -> str:
        """The record's first version keeps the agent's id; a later one gets a placeholder
        until every id of the run is known (`names`)."""
        versions = self.versions.setdefault(record_id, [])
        version = record_id
        if versions:
            version = f"\x00v{self._versions_made}\x00"
            self._versions_made += 1
            self.unnamed[version] = record_id
        versions.append(version)
        return version

    def _withdraw(self, version: str) -> bool:
        """Take back a version that never existed (its update did not take effect), if
        nothing but its own write names it: its write then generated nothing, as the
        native recording of such an update has it, and its id is free again."""
        if any(version in s["used_ids"] or version in s["invalidated_memory_ids"]
               for s in self.trace) or any(version in m["derived_from"]
                                           or m["supersedes"] == version
                                           for m in self.memories.values()):
            return False
        for step in self.trace:
            if version in step["generated_memory_ids"]:
                step["generated_memory_ids"].remove(version)
        del self.memories[version]
        self.versions[self.unnamed.pop(version, version)].remove(version)
        kept = [(item, forms) for item, forms in self._said if item != version]
        self._said, self._heads, self._matched = [], {}, {}  # indexes shift: made again
        self._head_sizes = set()
        for item, forms in kept:
            self._say(item, forms[0])
        for ids in (self.history, self.since_anchor, self.recent, self.retrieved):
            ids[:] = [i for i in ids if i != version]
        if self.anchor is not None:
            self.anchor.context.discard(version)
        self.touched.discard(version)
        self.withdrawn.add(version)
        return True

    def _record(self, memory_id: str, content: str, ts: int, by: str | None,
                supersedes: str | None, derived_from: list[str]) -> dict[str, Any]:
        self._say(memory_id, content)
        return {"memory_id": memory_id, "task_id": self.task_id, "content": content,
                "source": "agent_summary", "last_modified_by": by, "created_at": ts,
                "last_modified_at": ts, "derived_from": list(dict.fromkeys(derived_from)),
                "supersedes": supersedes, "status": MemoryStatus.ACTIVE.value, "sufficient_from": []}

    def _set_status(self, memory_id: str, status: str, by: str | None) -> None:
        record = self.memories[memory_id]
        if record["status"] != status:
            self.touched.add(memory_id)
            record["status"] = status
            record["last_modified_by"] = by if by is not None else record["last_modified_by"]

    def _step(self, step_type: str, content: str, ts: int, used: list[str],
              sufficient: list[str], *, invalidated: list[str] | None = None,
              generated: list[str] | None = None, status: str = "ok",
              tool_name: str | None = None, tool_args: dict[str, Any] | None = None,
              source: str | None = None) -> str:
        turn = max(1, len(self.session))
        step_id = self._next_step()
        self.ours[step_id] = STEP_PREFIX
        self.provisional[f"{STEP_PREFIX}{len(self.trace) + 1:03d}"] = step_id
        prev = self.trace[-1] if self.trace and self.trace[-1]["turn"] == turn else None
        if prev is not None:
            prev["next_step_ids"].append(step_id)
        self.trace.append({
            "step_id": step_id, "task_id": self.task_id, "step_type": step_type,
            "content": content, "prev_step_ids": [prev["step_id"]] if prev else [],
            "next_step_ids": [], "invalidated_memory_ids": invalidated or [],
            "generated_memory_ids": generated or [], "used_ids": list(dict.fromkeys(used)),
            "sufficient_ids": sufficient, "timestamp": ts, "turn": turn, "status": status,
            "tool_name": tool_name, "tool_args": tool_args})
        self.sources[step_id] = source or ""
        if source is not None:
            self.by_source.setdefault(source, step_id)
        return step_id


def mark_final_answers(trace: list[dict[str, Any]]) -> None:
    """The last model output of each user turn without a tool call is the turn's answer."""
    last: dict[int, dict[str, Any]] = {}
    for step in trace:
        if step["step_type"] == "claim":
            last[step["turn"]] = step
    for step in last.values():
        step["step_type"] = "final_answer"


_PLACEHOLDER = re.compile("\x00[usv][0-9]+\x00")


def renamed(value: Any, names: dict[str, str]) -> Any:
    """`value` with every placeholder replaced by its id (in ids and in the texts that name
    them, such as a memory read's "Retrieved: …")."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: names.get(m.group(0), m.group(0)), value) \
            if "\x00" in value else value
    if isinstance(value, list):
        return [renamed(v, names) for v in value]
    if isinstance(value, dict):  # keys too: `world` maps ids to their sources
        return {renamed(k, names): renamed(v, names) for k, v in value.items()}
    return value


HEAD = 8  # the index of said texts: their first HEAD characters (the whole of a shorter one)


def _heads(text: str, sizes: set[int]) -> set[str]:
    """Every substring of `text` as long as an indexed head: where a said text may start."""
    return {text[i:i + size] for size in sizes for i in range(len(text) - size + 1)}


def occurs_whole(form: str, text: str) -> bool:
    """Whether `form` (a said text, or its JSON-escaped form: a structure quoting it carries
    it so) appears in `text` as a whole: not inside a longer word."""
    at = text.find(form)
    while at >= 0:
        end = at + len(form)
        if (at == 0 or not (text[at - 1].isalnum() and form[0].isalnum())) and (
                end == len(text) or not (text[end].isalnum() and form[-1].isalnum())):
            return True
        at = text.find(form, at + 1)
    return False


def _strings(value: Any) -> list[str]:
    """The non-empty strings inside a call's arguments (what a later input may carry)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _args(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in sorted(arguments.items()))
