"""What real agents do, as runs recorded natively and traced (issue 36): the corpus behind the
soundness check of the trace loaders (benchmark/soundness.py; tests/integration/
test_trace_shapes.py samples it, bench/trace_soundness.py runs all of it).

A scripted agent (`ShapeAgent`) acts in a conversation and keeps two records of it: the
native one (the case our Recorder would write: exactly what each model call was shown, one
step per memory operation whatever the number of records, the records written together its
output) and a log of what an outside observer sees (requests, responses, tool calls, memory
operations, sub-agents). The log is exported as the run an outside agent would have traced
(loaders/shape_export.py: OTLP made with the real OpenTelemetry SDK, messages as JSON strings,
structured, and protobuf; OpenAI-style transcripts with and without `requests`).

Shapes (`SHAPES`), each with random variations per seed (which role carries a sub-agent's
answer, nested or linked traces, an exact or prefixed copy, span links or none, agent ids
shaped like the loader's own: `s_002`, `u_001`, `m_001~2`):
- multi_record: one operation writes several records from one output;
- consolidation: records merged into one, with `derived_from` and `supersedes`;
- derived_search: a search returns a consolidated summary whose sources only its
  `derived_from` names;
- subagent_tool / subagent_system / subagent_user: a sub-agent's answer reaches the parent as
  a tool result, in a system message or in a user message (nested or in a linked trace);
- subagent_hidden: the tool running the sub-agent returns something its answer does not
  show (what the tool made of it): only the nesting says the result depends on it;
- parallel_tools: one output issues several tool calls;
- failed_update: an update that fails (error status) or silently does not take effect (a
  later search returns the old content), followed by a delete or another update;
- reasoning: outputs with reasoning content;
- system_memory: memory in the system prompt (by content; by id for records never searched).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from provrepair.loaders.agent_run import mark_final_answers
from provrepair.provenance.models import FORMAT, Case
from provrepair.provenance.state.memory import version_id
from provrepair.provenance.validate import parse_case
from provrepair.provenance.vocab import MemoryStatus

FACTS = ("prefers window seats", "is vegetarian", "lives in Lyon", "flies Air Nord",
         "pays with the blue card", "is allergic to nuts", "works at Acme", "has a dog",
         "speaks Danish", "likes jazz", "books trains first class", "runs marathons",
         "collects stamps", "drives an electric car", "sleeps at 22h", "reads crime novels")
OUR_SHAPED = ("s_002", "u_001", "m_001", "m_001~2", "s_005", "u_002", "m_002~2", "s_001",
              "u_003", "m_003", "s_003~2", "s_010")  # agent ids the loader's own ids look like


@dataclass
class Msg:
    """One message of a request: its text as sent, and the native items it carries."""

    role: str                          # user | assistant | system | tool
    text: str = ""
    refs: tuple[str, ...] = ()         # native ids this message shows the model
    records: tuple[str, ...] = ()      # records named by id (`memory_record_id` parts)
    calls: tuple[tuple[str, str, dict[str, Any]], ...] = ()  # (call id, name, args)
    call_id: str | None = None         # a tool message: the call it answers


@dataclass
class Written:
    """A record as a memory operation names it."""

    record_id: str
    content: str
    derived_from: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()


@dataclass
class Logged:
    """One thing the outside observer saw, in order; `step` is the native step it became."""

    kind: str   # user | chat | tool | search | write | agent
    ts: int
    agent: str = "main"  # the agent acting ("main" or a sub-agent's name)
    step: str = ""
    text: str = ""
    request: list[Msg] = field(default_factory=list)
    reasoning: str = ""
    reasoning_step: str = ""
    calls: tuple[tuple[str, str, dict[str, Any]], ...] = ()
    actions: tuple[str, ...] = ()
    call_id: str = ""
    records: tuple[Written, ...] = ()
    op: str = ""
    failed: bool = False
    links: tuple[str, ...] = ()  # native steps a write points at (span links)
    linked: bool = False         # agent: a sub-agent in a trace of its own
    parent_call: str = ""        # agent: the call of the parent that runs it
    end: bool = False            # agent: its end


@dataclass
class ShapeRun:
    """A run of one shape: the native case and the observer's log."""

    shape: str
    case: Case
    log: list[Logged]
    links: bool  # memory writes carry span links to what they store


class ShapeAgent:
    """The scripted agent: acts, and records natively and for the observer."""

    def __init__(self, task_id: str, rng: random.Random, *, our_shaped: bool, links: bool):
        self.task_id, self.rng, self.links = task_id, rng, links
        self.ts = 0
        self.session: list[dict[str, Any]] = []
        self.trace: list[dict[str, Any]] = []
        self.memories: dict[str, dict[str, Any]] = {}
        self.current: dict[str, str] = {}  # agent record id → its current native version
        self.pending: dict[str, str] = {}  # native version placeholder → agent record id
        self.log: list[Logged] = []
        self.conversation: list[Msg] = []  # the main agent's messages so far
        self.agent = "main"
        self.ids = iter(rng.sample(OUR_SHAPED, len(OUR_SHAPED)) if our_shaped else ())
        self.made = self.noted = 0
        self.facts = rng.sample(FACTS, len(FACTS))

    # -- the world ------------------------------------------------------------------------

    def record_id(self) -> str:
        self.made += 1
        return next(self.ids, f"m_{self.made:03d}")

    def fact(self) -> str:
        self.noted += 1
        return (f"The user {self.facts[self.noted % len(self.facts)]} "
                f"(note {self.noted}-{self.rng.randrange(100, 999)}).")

    def root(self, content: str | None = None, derived_from: tuple[str, ...] = (),
             supersedes: str | None = None, status: str = MemoryStatus.ACTIVE.value) -> str:
        """A record in the store before the run."""
        rid = self.record_id()
        self._memory(rid, rid, content or self.fact(), None, list(derived_from), supersedes)
        self.memories[rid]["status"] = status
        return rid

    # -- acting -----------------------------------------------------------------------------

    def user(self, text: str) -> str:
        self.ts += 10
        input_id = f"U{len(self.session) + 1}"
        self.session.append({"input_id": input_id, "task_id": self.task_id,
                             "turn": len(self.session) + 1, "content": text,
                             "timestamp": self.ts})
        self.conversation.append(Msg("user", text, (input_id,)))
        self.log.append(Logged("user", self.ts, text=text, step=input_id))
        return input_id

    def search(self, records: list[str], query: str = "what do I know") -> str:
        """A memory search returning these records (current versions), with their lineage."""
        found = [self.current.get(r, r) for r in records]
        step = self._step("memory_read", f"Retrieved {', '.join(found)}", found)
        self.log.append(Logged("search", self.ts, self.agent, step, text=query, records=tuple(
            Written(self.memories[v]["record_id"], self.memories[v]["content"],
                    tuple(self.memories[v]["derived_from"]),
                    (self.memories[v]["supersedes"],) if self.memories[v]["supersedes"]
                    else ()) for v in found)))
        return step

    def chat(self, request: list[Msg], text: str,
             calls: tuple[tuple[str, dict[str, Any]], ...] | list[tuple[str, dict[str, Any]]] = (),
             reasoning: str = "", keep: bool = True) -> tuple[str, list[str]]:
        """One model call: it was shown exactly what `request` carries (its native inputs);
        its output is a claim (or a plan with the tool calls it issues); `reasoning` is a
        plan step before it. `keep`: the answer joins the main conversation."""
        used = list(dict.fromkeys(r for m in request for r in (*m.refs, *m.records)))
        thought = ""
        if reasoning:
            thought = self._step("plan", reasoning, used)
            used = [thought]  # the output follows its reasoning
        step = self._step("plan" if calls else "claim", text or "(tool calls)", used)
        actions, made = [], []
        for name, args in calls:
            action = self._step("tool_action", f"{name}({args})", [step], tool=(name, args))
            actions.append(action)
            made.append((f"call_{action}", name, args))
        self.log.append(Logged("chat", self.ts, self.agent, step, text, list(request),
                               reasoning, thought, tuple(made), tuple(actions)))
        if keep and self.agent == "main":
            self.conversation.append(Msg("assistant", text, (step, *actions),
                                         calls=tuple(made)))
        return step, actions

    def tool(self, action: str, result: str, *, also: tuple[str, ...] = (),
             error: bool = False, keep: bool = True) -> str:
        """A tool's result; `also`: native items the result carries (a sub-agent's answer)."""
        step = self._step("tool_observation", result, [action, *also],
                          status="error" if error else "ok")
        call = f"call_{action}"
        self.log.append(Logged("tool", self.ts, self.agent, step, result, call_id=call,
                               failed=error))
        if keep and self.agent == "main":
            self.conversation.append(Msg("tool", result, (step,), call_id=call))
        return step

    def write(self, op: str, records: list[Written], used: list[str], *, failed: bool = False,
              silent: bool = False) -> tuple[str, list[str]]:
        """One memory operation (create | update | delete) of one or more records, natively
        one step; `failed`: it reports an error; `silent`: it reports success but does not
        take effect (only a later read shows it)."""
        retired = [self.current[r] for w in records for r in
                   (w.supersedes or ((w.record_id,) if op != "create" else ()))
                   if r in self.current]
        sources = [self.current.get(s, s) for w in records for s in w.derived_from]
        kind = {"create": "memory_write", "update": "memory_update",
                "delete": "memory_delete"}[op]
        if op == "update" and len(retired) > len(records):
            kind = "memory_consolidate"
        effective = not failed and not silent
        step = self._step(kind, " ".join(w.content for w in records) or f"{op} records",
                          [*used, *sources], invalidated=list(dict.fromkeys(retired)),
                          status="error" if failed else "ok")
        new = []
        if effective and op != "delete":
            for w in records:
                replaced = [self.current[r] for r in (w.supersedes or (w.record_id,))
                            if r in self.current] if op != "create" else []
                version = self._version(w.record_id)
                self._memory(version, w.record_id, w.content, step,
                             [self.current.get(s, s) for s in w.derived_from],
                             replaced[0] if replaced else None)
                new.append(version)
            self.trace[-1]["generated_memory_ids"] = new
        if effective:
            status = (MemoryStatus.DELETED if op == "delete" else MemoryStatus.SUPERSEDED).value
            for old in dict.fromkeys(retired):
                self.memories[old].update(status=status, last_modified_by=step)
        self.log.append(Logged("write", self.ts, self.agent, step, op=op,
                               records=tuple(records), failed=failed,
                               links=tuple(used) if self.links else ()))
        return step, new

    @contextmanager
    def subagent(self, name: str, parent_action: str, linked: bool) -> Iterator[None]:
        """A sub-agent run by the parent's tool call (its spans nested in the call's, or in
        a trace of its own linking to it)."""
        self.log.append(Logged("agent", self.ts, name, linked=linked,
                               parent_call=f"call_{parent_action}"))
        outer, self.agent = self.agent, name
        try:
            yield
        finally:
            self.agent = outer
            self.log.append(Logged("agent", self.ts, name, end=True))

    # -- requests -------------------------------------------------------------------------

    def history(self) -> list[Msg]:
        return list(self.conversation)

    def shown(self, records: list[str], by_id: bool = False) -> Msg:
        """A system message showing records by content (or naming them by id)."""
        versions = tuple(self.current.get(r, r) for r in records)
        notes = "\n".join(f"- {self.memories[v]['content']}" for v in versions)
        return Msg("system", f"What you remember:\n{notes}", versions,
                   versions if by_id else ())

    # -- the native case ------------------------------------------------------------------

    def case(self) -> Case:
        names = self._version_names()
        memories = [_renamed(m, names) for m in self.memories.values()]
        trace = _chained([_renamed(s, names) for s in self.trace])
        mark_final_answers(trace)  # the convention every reading of a run shares
        for entry in self.log:
            entry.step = names.get(entry.step, entry.step)
        return parse_case({"format": FORMAT, "task_id": self.task_id, "domain": "agent",
                           "session": self.session, "memory_store": memories, "trace": trace,
                           "diagnosed_faults": [memories[0]["memory_id"]]})

    def _version_names(self) -> dict[str, str]:
        """Versions named as the loaders name them: `<agent id>~N` against every agent id."""
        taken = {m for m in self.memories if m not in self.pending}
        return {p: version_id(agent, taken) for p, agent in self.pending.items()}

    def _version(self, record_id: str) -> str:
        if record_id not in self.current and not any(
                m["record_id"] == record_id for m in self.memories.values()):
            return record_id
        placeholder = f"\x00{len(self.pending)}"
        self.pending[placeholder] = record_id
        return placeholder

    def _memory(self, memory_id: str, record_id: str, content: str, by: str | None,
                derived_from: list[str], supersedes: str | None) -> None:
        self.memories[memory_id] = {
            "memory_id": memory_id, "record_id": record_id, "task_id": self.task_id,
            "content": content, "source": "agent_summary", "last_modified_by": by,
            "created_at": self.ts, "last_modified_at": self.ts,
            "derived_from": list(dict.fromkeys(derived_from)), "supersedes": supersedes,
            "status": MemoryStatus.ACTIVE.value, "sufficient_from": []}
        self.current[record_id] = memory_id

    def _step(self, kind: str, content: str, used: list[str], *,
              invalidated: list[str] | None = None, status: str = "ok",
              tool: tuple[str, dict[str, Any]] | None = None) -> str:
        """A native step; its CHAIN (the turn's steps in order) is drawn in `case`."""
        self.ts += 1
        step_id = f"S{len(self.trace) + 1:03d}"
        self.trace.append(dict(
            step_id=step_id, task_id=self.task_id, step_type=kind, content=content,
            invalidated_memory_ids=invalidated or [], generated_memory_ids=[],
            used_ids=list(dict.fromkeys(used)), sufficient_ids=[], timestamp=self.ts,
            turn=max(1, len(self.session)), status=status,
            **({"tool_name": tool[0], "tool_args": tool[1]} if tool else {})))
        return step_id


def _chained(trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps with their CHAIN: each turn's steps in the order they were taken."""
    by_turn: dict[int, list[dict[str, Any]]] = {}
    for step in trace:
        by_turn.setdefault(step["turn"], []).append(step)
    for steps in by_turn.values():
        for before, after in zip([None, *steps], [*steps, None], strict=True):
            if after is not None:
                after["prev_step_ids"] = [before["step_id"]] if before else []
            if before is not None:
                before["next_step_ids"] = [after["step_id"]] if after else []
    return trace


def _renamed(value: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    def name(v: Any) -> Any:
        if isinstance(v, list):
            return [names.get(x, x) if isinstance(x, str) else x for x in v]
        return names.get(v, v) if isinstance(v, str) else v
    out = {k: name(v) for k, v in value.items()}
    if out.get("record_id") == out.get("memory_id"):
        out.pop("record_id", None)
    return out


# -- the shapes ----------------------------------------------------------------------------

Script = Callable[[ShapeAgent], None]


def _multi_record(a: ShapeAgent) -> None:
    a.user("Plan my trip to Lyon, and remember what matters.")
    known = a.root()
    a.search([known])
    facts = [a.fact() for _ in range(a.rng.randint(2, 3))]
    answer, _ = a.chat([a.shown([known]), *a.history()], "Noted: " + " ".join(facts))
    rids = [a.record_id() for _ in facts]
    a.write("create", [Written(r, f) for r, f in zip(rids, facts, strict=True)], [answer])
    a.user("What do you know about me now?")
    a.search(rids[:2])
    a.chat([a.shown(rids[:2]), a.conversation[-1]], "You " + facts[0].lower())


def _consolidation(a: ShapeAgent) -> None:
    a.user("Tidy up what you remember about me.")
    parts = [a.root() for _ in range(a.rng.randint(2, 3))]
    a.search(parts)
    summary, _ = a.chat([a.shown(parts), *a.history()], "Summary: " + " ".join(
        a.memories[p]["content"] for p in parts))
    merged = a.record_id()
    a.write("update", [Written(merged, "Merged profile: " + " / ".join(
        a.memories[p]["content"] for p in parts), tuple(parts), tuple(parts))], [summary])
    a.user("Remind me of my profile.")
    a.search([merged])
    a.chat([a.shown([merged]), a.conversation[-1]], "Your profile is on file.")


def _derived_search(a: ShapeAgent) -> None:
    statuses = [MemoryStatus.ACTIVE.value, MemoryStatus.SUPERSEDED.value]
    sources = [a.root(status=a.rng.choice(statuses)) for _ in range(2)]
    summary = a.root("Summary: " + " ".join(a.memories[s]["content"] for s in sources),
                     derived_from=tuple(sources),
                     supersedes=sources[0] if a.rng.random() < 0.5 else None)
    a.user("What do you know about my travel habits?")
    a.search([summary])
    answer, _ = a.chat([a.shown([summary]), *a.history()], "From your summary: trains.")
    a.write("create", [Written(a.record_id(), "Travel habits: trains, per the summary.")],
            [answer])


def _subagent(role: str) -> Script:
    def script(a: ShapeAgent) -> None:
        a.user("Find me a restaurant that fits my diet.")
        diet = a.root()
        a.search([diet])
        _, (call,) = a.chat([a.shown([diet]), *a.history()], "",
                               [("research", {"question": "vegetarian places in Lyon?"})])
        linked = a.rng.random() < 0.5
        with a.subagent("researcher", call, linked):
            hint = a.root()
            a.search([hint])
            reply = "Le Potager, rue Merciere, fits."
            found, _ = a.chat([Msg("user", "vegetarian places in Lyon?", (call,)),
                               a.shown([hint])], reply)
        said = reply if a.rng.random() < 0.5 else f"Researcher reports: {reply}"
        if role == "tool":
            a.tool(call, said, also=(found,))
            request = a.history()
        elif role == "hidden":  # the tool returns what it made of the answer, not the answer
            a.tool(call, '{"pick": "Le Potager"}', also=(found,))
            request = a.history()
        else:
            a.tool(call, "done")
            request = [*a.history(), Msg(role, said, (found,))]
        _, (book,) = a.chat(request, "", [("book", {"place": "Le Potager"})])
        result = a.tool(book, "booked for 8pm")
        final, _ = a.chat([*a.history()], "Booked Le Potager at 8pm.")
        a.write("create", [Written(a.record_id(), "Likes Le Potager.")], [final, result])
    return script


def _parallel_tools(a: ShapeAgent) -> None:
    a.user("Compare train and flight to Oslo.")
    home = a.root()
    a.search([home])
    n = a.rng.randint(2, 3)
    _, actions = a.chat([a.shown([home]), *a.history()], "",
                        [(f"quote_{i}", {"to": "Oslo", "mode": m}) for i, m in
                         zip(range(n), ("train", "flight", "bus"), strict=False)])
    results = [a.tool(act, f"quote {i}: {100 + 40 * i} EUR") for i, act in enumerate(actions)]
    best, _ = a.chat(a.history(), "The train is cheapest.")
    a.write("create", [Written(a.record_id(), "Prefers the cheapest mode to Oslo.")],
            [best, *results[:1]])


def _failed_update(a: ShapeAgent) -> None:
    a.user("I moved to Oslo; update my address.")
    address = a.root()
    a.search([address])
    ok, _ = a.chat([a.shown([address]), *a.history()], "Updating your address to Oslo.")
    silent = a.rng.random() < 0.5
    a.write("update", [Written(address, "The user lives in Oslo.")], [ok],
            failed=not silent, silent=silent)
    a.user("Where do I live?")
    a.search([address])  # the old content: the update did not take effect
    answer, _ = a.chat([a.shown([address]), a.conversation[-1]], "You live in Lyon.")
    if a.rng.random() < 0.5:
        a.write("delete", [Written(address, "")], [answer])
    else:
        a.write("update", [Written(address, "The user lives in Oslo (confirmed).")], [answer])
    a.user("And now?")
    other = a.root()
    a.search([other])
    a.chat([a.shown([other]), a.conversation[-1]], "I have your other notes.")


def _reasoning(a: ShapeAgent) -> None:
    a.user("Should I pack an umbrella for Bergen?")
    weather = a.root()
    a.search([weather])
    thought = "Bergen is rainy; the user " + a.memories[weather]["content"].lower()
    answer, _ = a.chat([a.shown([weather]), *a.history()], "Yes, pack an umbrella.",
                       reasoning=thought)
    a.write("create", [Written(a.record_id(), "Travels to Bergen.")], [answer])
    a.user("Anything else?")
    a.chat(a.history(), "A warm coat.", reasoning="Bergen is cold in spring.")


def _system_memory(a: ShapeAgent) -> None:
    profile = [a.root() for _ in range(2)]
    pinned = a.root()  # in the prompt by id, never searched
    a.user("Hello again.")
    a.search(profile)
    hi, _ = a.chat([a.shown(profile), *a.history()], "Welcome back.")
    note = a.record_id()
    a.write("create", [Written(note, "Greeted the user again.")], [hi])
    a.user("What do you remember?")
    # the next turns load memory into the system prompt: no search
    a.chat([a.shown([profile[0], note]), a.shown([pinned], by_id=True), a.conversation[-1]],
           "Your profile and our last chat.")


def _more_turns(a: ShapeAgent, turns: int) -> None:
    """Later turns of the conversation, as agents with a context window send them: the new
    question with what it retrieved, or the last exchange too; some save a note. What the
    reading makes of the earlier turns here is its over-approximation."""
    for k in range(turns):
        a.user(f"Another question ({k + 1}): what about {a.rng.choice(FACTS)}?")
        request = [a.conversation[-1]]
        if a.rng.random() < 0.6:
            record = a.root()
            a.search([record])
            request.insert(0, a.shown([record]))
        if a.rng.random() < 0.4:
            request = [*a.conversation[-3:-1], *request]
        answer, _ = a.chat(request, f"Answer {k + 1}: noted.")
        if a.rng.random() < 0.3:
            a.write("create", [Written(a.record_id(), f"Asked question {k + 1}.")], [answer])


SHAPES: dict[str, Script] = {
    "multi_record": _multi_record, "consolidation": _consolidation,
    "derived_search": _derived_search, "subagent_tool": _subagent("tool"),
    "subagent_system": _subagent("system"), "subagent_user": _subagent("user"),
    "subagent_hidden": _subagent("hidden"),
    "parallel_tools": _parallel_tools, "failed_update": _failed_update,
    "reasoning": _reasoning, "system_memory": _system_memory,
}


def all_shapes_run(seed: int) -> ShapeRun:
    """One conversation doing every shape in turn (live capture extends it trace by trace)."""
    rng = random.Random(f"{seed}/all")
    agent = ShapeAgent(f"all-shapes-{seed}", rng, our_shaped=True, links=True)
    for script in SHAPES.values():
        script(agent)
    return ShapeRun("all", agent.case(), agent.log, agent.links)


def shape_runs(seed: int, per_shape: int = 4, shapes: list[str] | None = None) -> list[ShapeRun]:
    """`per_shape` runs of each shape (all, or those named), varied by `seed`."""
    runs = []
    for name in shapes or list(SHAPES):
        for k in range(per_shape):
            rng = random.Random(f"{seed}/{name}/{k}")
            agent = ShapeAgent(f"{name}-{seed}-{k}", rng, our_shaped=rng.random() < 0.5,
                               links=rng.random() < 0.5)
            SHAPES[name](agent)
            _more_turns(agent, rng.randint(0, 3))
            runs.append(ShapeRun(name, agent.case(), agent.log, agent.links))
    return runs
