"""Multi-conversation histories over one shared agent memory (issue 37), and the one-task
reference they are checked against.

`random_history`: conversations in time order over one memory namespace, each a task of its
own; each reads records earlier ones wrote (or that were planted in the store, `injected`),
cites them in claims, plans, tool calls and answers, and writes records derived from what it
read: new records, new versions of a record it read (`<agent id>~<n>`, derived from that
version alone), or a version of a record it never read, written afresh. A record is held by
every later conversation that read it, under its agent id, as a root record (it was read
from the store, not written there), at its latest version and, at times, the version that
one updated beside it (a snapshot of both), or at an earlier version (a stale snapshot,
taken before a later write, a fresh one included); at times the versions of a record share
texts (two writers of one content: `History.collided`); at times a conversation's recording
renders what it read unlike its writer did (`read <id>`, not `record <id>`). At times a
conversation runs at once with the one before it: it started earlier (its question came
before the writer started) and its steps read what that one wrote. Records are never retired
(see `concatenate` for why). Every decision is asked of a `Chooser`
(benchmark/random_cases.py), so hypothesis and `random.Random` drive the same generator.

`concatenate`: the reference for the namespace plan (repair/plan/namespace.py): one task made
of the conversations in time order, ids prefixed with their task, each version of a record
one node joined by its memory id (a record written once: by agent id), the faults the
versions each line of a faulty record's versions starts at (the first, and each written
afresh: `History.origins`). Planned in memory (benchmark/reference.py), its affected region,
support, removals (by agent id) and invalidations, projected back onto the conversations,
are what the namespace plan must find. A record retired by a later conversation would have
one status in the writer's task and another in the joined node (the reference keeps one),
so the histories retire none.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from provrepair.benchmark.random_cases import Chooser
from provrepair.provenance.models import FORMAT, Case
from provrepair.provenance.validate import parse_case
from provrepair.provenance.vocab import MemoryStatus

NAMESPACE = "user-ns"
SPAN = 1000  # each conversation's time window: conversation i runs in [i*SPAN, (i+1)*SPAN)


@dataclass
class History:
    """Conversations of one namespace in time order, and the faults (agent ids)."""

    cases: list[Case]
    faults: list[str]
    writer: dict[str, str] = field(default_factory=dict)  # agent id → task that wrote it
    # agent id → the versions a line of its versions starts at: the first one, and each
    # written afresh by a conversation that held none (repair/plan/namespace.py `_origins`)
    origins: dict[str, list[str]] = field(default_factory=dict)
    # versions of a record share texts: the namespace plan, which knows a version by its
    # text, may hold more than the reference, which joins them by memory id
    collided: bool = False

    def fault_versions(self) -> list[str]:
        """The versions (memory ids) the faulty records are seeded at."""
        return [v for f in self.faults for v in self.origins.get(f, [f])]

    def unknown_copies(self) -> list[tuple[str, str]]:
        """(task, memory id) of each copy read whose content no other conversation wrote (a
        planted record, a recording that renders what it read its own way), where another
        conversation that started before the copy's ended holds another version of its
        record: which version it is cannot be told, so the namespace plan hands it that
        one's reached versions (repair/plan/namespace.py "Versions"), where the reference
        joins it to the one it is: there the plan may only hold more."""
        times = {case.task_id: conversation_times(case) for case in self.cases}
        written: dict[str, set[str]] = {}  # content → the conversations that wrote it
        for case in self.cases:
            mine = written_by(case)
            for m in case.memory_store:
                if m.memory_id in mine:
                    written.setdefault(m.content, set()).add(case.task_id)
        found: list[tuple[str, str]] = []
        for case in self.cases:
            mine, ended = written_by(case), times[case.task_id][1]
            others: dict[str, set[str]] = {}  # agent id → contents held by those before
            for other in self.cases:
                if other is not case and times[other.task_id][0] <= ended:
                    for m in other.memory_store:
                        others.setdefault(m.record_id or m.memory_id, set()).add(m.content)
            found += [(case.task_id, m.memory_id) for m in case.memory_store
                      if m.memory_id not in mine
                      and not written.get(m.content, set()) - {case.task_id}
                      and others.get(m.record_id or m.memory_id, set()) - {m.content}]
        return found


def written_by(case: Case) -> set[str]:
    """The memory ids the conversation wrote."""
    return {g for s in case.trace for g in s.generated_memory_ids}


def conversation_times(case: Case) -> tuple[int, int]:
    """A conversation's start and end as the store takes them (provenance/agent_records.py)."""
    times = [u.timestamp for u in case.session] + [s.timestamp for s in case.trace]
    return min(times), max(times)


def _record(task: str, memory_id: str, ts: int, *, source: str, by: str | None = None,
            derived: Sequence[str] = (), sufficient: Sequence[str] = (),
            record_id: str | None = None) -> dict[str, Any]:
    return {"memory_id": memory_id, "task_id": task, "content": f"record {memory_id}",
            "source": source, "last_modified_by": by, "created_at": ts, "last_modified_at": ts,
            "derived_from": list(derived), "supersedes": None, "trust_score": None,
            "status": MemoryStatus.ACTIVE.value, "fact_key": None, "fact_value": None, "entity_id": None,
            "sufficient_from": list(sufficient), **({"record_id": record_id} if record_id else {})}


def _step(task: str, step_id: str, step_type: str, ts: int, used: Sequence[str],
          sufficient: Sequence[str] = (), generated: Sequence[str] = (),
          turn: int = 1) -> dict[str, Any]:
    return {"step_id": step_id, "task_id": task, "step_type": step_type,
            "content": f"{step_type} {step_id}", "prev_step_ids": [], "next_step_ids": [],
            "invalidated_memory_ids": [], "generated_memory_ids": list(generated),
            "used_ids": list(used), "sufficient_ids": list(sufficient), "timestamp": ts,
            "turn": turn}


def _pick(chooser: Chooser, items: Sequence[str], lo: int, hi: int) -> list[str]:
    return [items[i] for i in sorted(chooser.indices(len(items), lo, hi))]


KINDS_STEP = ("memory_read", "claim", "plan", "memory_write", "claim", "memory_write")


def random_history(chooser: Chooser, conversations: int, *, max_steps: int = 8,
                   namespace: str = NAMESPACE, prefix: str = "conv") -> History:
    """A random history of `conversations` conversations (see the module docstring); task
    ids are `<prefix>_NN`, agent ids `p<conversation>_<k>` (planted) and `r<n>` (written),
    versions `<agent id>~<n>`."""
    store: dict[str, dict[str, Any]] = {}   # agent id → its latest version as written
    before: dict[str, dict[str, Any]] = {}  # agent id → the version its latest updated
    written: dict[str, list[dict[str, Any]]] = {}  # agent id → every version, oldest first
    writer: dict[str, str] = {}
    origins: dict[str, list[str]] = {}
    versions = 0
    cases: list[Case] = []
    for c in range(conversations):
        task = f"{prefix}_{c:02d}"
        # its steps run in its window; at times it runs at once with the one before: its
        # question came before that one started, its steps (reads included) after its writes
        start = c * SPAN
        asked = start - (SPAN + SPAN // 2 if c and chooser.flag(15) else 0)
        agents = _pick(chooser, sorted(store), 0, 6)
        # a stale snapshot holds an earlier version than the latest (taken before a later
        # write, a fresh one included); a snapshot may hold an updated record's earlier
        # version beside the one it holds
        version = {a: written[a][chooser.integer(0, len(written[a]) - 2)]
                   if len(written[a]) > 1 and chooser.flag(15) else store[a] for a in agents}
        kept = [version[a] for a in agents] + [
            before[a] for a in agents
            if a in before and version[a] is store[a] and chooser.flag(30)]
        # a recording that renders what it read unlike its writer did
        rendered = chooser.flag(10)
        memories = [{**m, "task_id": task, "derived_from": [], "sufficient_from": [],
                     "last_modified_by": None,
                     "content": f"read {m['memory_id']}" if rendered else m["content"]}
                    for m in kept]
        held = [m["memory_id"] for m in memories]
        latest = {version[a]["memory_id"]: a for a in agents}  # held version → agent id
        for k in range(chooser.integer(0, 1) if c else 1):  # planted in the store
            planted = f"p{c}_{k}"
            memories.append(_record(task, planted, start, source="injected"))
            held.append(planted)
            origins[planted] = [planted]
            store[planted] = version[planted] = memories[-1]
            latest[planted], written[planted] = planted, [memories[-1]]
        session = [{"input_id": "u_1", "task_id": task, "turn": 1,
                    "content": f"question {c}", "timestamp": asked + 1}]
        trace: list[dict[str, Any]] = []
        earlier: list[str] = ["u_1"]
        for i in range(1, chooser.integer(2, max_steps) + 1):
            ts, step_id = start + 1 + i, f"s_{i:02d}"
            kind = KINDS_STEP[chooser.integer(0, len(KINDS_STEP) - 1)]
            readable = held if kind in ("memory_read", "memory_write") else \
                [*held[-4:], *earlier[-4:]]
            used = _pick(chooser, readable, 0 if kind == "claim" else 1, 3)
            sufficient = [u for u in used if kind != "memory_read" and chooser.flag(50)]
            generated: list[str] = []
            if kind == "memory_write":
                sources = [u for u in used if u in held]
                updated = next((latest[u] for u in used if u in latest), None)
                afresh = sorted(a for a in store if a not in latest.values())
                if updated is not None and chooser.flag(40):
                    # a new version of a record read here, from that version alone
                    versions += 1
                    agent, new = updated, f"{updated}~{versions}"
                    used, sufficient, sources = [version[agent]["memory_id"]], [], []
                    derived: list[str] = list(used)
                elif afresh and chooser.flag(20):
                    # a record this conversation never read, written afresh
                    versions += 1
                    agent = afresh[chooser.integer(0, len(afresh) - 1)]
                    new, derived = f"{agent}~{versions}", sources
                    origins[agent].append(new)
                else:
                    agent = new = f"r{len(writer)}"
                    derived = sources
                    origins[agent] = [new]
                memories.append(_record(task, new, ts, source="agent_summary", by=step_id,
                                        derived=derived,
                                        sufficient=[s for s in sources if chooser.flag(50)],
                                        record_id=agent if new != agent else None))
                generated.append(new)
                writer.setdefault(agent, task)
                if agent in version and version[agent]["memory_id"] in derived:
                    before[agent] = version[agent]
                else:
                    before.pop(agent, None)
                store[agent] = version[agent] = memories[-1]
                written.setdefault(agent, []).append(memories[-1])
                latest = {k: v for k, v in latest.items() if v != agent}
                latest[new] = agent
            trace.append(_step(task, step_id, kind, ts, used, sufficient, generated))
            earlier.append(step_id)
            held.extend(generated)
        final = f"s_{len(trace) + 1:02d}"
        trace.append(_step(task, final, "final_answer", start + len(trace) + 2,
                           _pick(chooser, [*held[-3:], *earlier[-3:]], 1, 3)))
        for a, b in pairwise(trace):
            a["next_step_ids"], b["prev_step_ids"] = [b["step_id"]], [a["step_id"]]
        cases.append(parse_case({"format": FORMAT, "task_id": task, "domain": "namespace",
                                 "session": session, "memory_store": memories, "trace": trace,
                                 "diagnosed_faults": [], "memory_namespace": namespace}))
    faults = _pick(chooser, sorted(store), 1, 2)
    collided = chooser.flag(10)  # versions of a record sharing a text (two writers of one)
    if collided:
        cases = [_collided(case) for case in cases]
    return History(cases, faults, writer, origins, collided=collided)


def _collided(case: Case) -> Case:
    """The case with each version's text one of two per record (by its memory id)."""
    return case.model_copy(update={"memory_store": [
        m.model_copy(update={"content": f"text {m.record_id or m.memory_id} "
                                        f"{zlib.crc32(m.memory_id.encode()) % 2}"})
        for m in case.memory_store]})


@dataclass
class Concatenated:
    """The reference task, and where each of its nodes came from."""

    case: Case
    origin: dict[str, list[tuple[str, str]]]   # reference id → every (task, node id) it is
    finals: dict[str, str]                     # task → reference id of its last final answer
    record_of: dict[str, str] = field(default_factory=dict)  # version → its agent id


def concatenate(history: History, task_id: str = "concatenated") -> Concatenated:
    """The conversations in time order as one task; each version of a record one node,
    joined by its memory id across the conversations holding it (a record written once is
    one node, joined by agent id), a version derived from the one it updated; the faults
    every version a line of the faulty records' versions starts at (`History.origins`).
    Ids: `<task>.<id>` for inputs and steps, the memory id for records."""
    session: list[dict[str, Any]] = []
    trace: list[dict[str, Any]] = []
    records: dict[str, dict[str, Any]] = {}
    origin: dict[str, list[tuple[str, str]]] = {}
    record_of: dict[str, str] = {}
    finals: dict[str, str] = {}
    for n, case in enumerate(history.cases):
        turns = n * 100
        local = {u.input_id: f"{case.task_id}.{u.input_id}" for u in case.session}
        local.update({s.step_id: f"{case.task_id}.{s.step_id}" for s in case.trace})
        ids = {**local, **{m.memory_id: m.memory_id for m in case.memory_store}}
        for m in case.memory_store:
            origin.setdefault(m.memory_id, []).append((case.task_id, m.memory_id))
            record_of[m.memory_id] = m.record_id or m.memory_id
            if m.memory_id not in records:  # the version as written is the one all read
                records[m.memory_id] = {**m.model_dump(mode="json"), "task_id": task_id,
                                        "last_modified_by": ids.get(m.last_modified_by or "")
                                        if m.last_modified_by else None,
                                        "derived_from": [ids[d] for d in m.derived_from],
                                        "sufficient_from": [ids[d] for d in m.sufficient_from]}
                records[m.memory_id].pop("record_id", None)
        for u in case.session:
            origin[local[u.input_id]] = [(case.task_id, u.input_id)]
            session.append({**u.model_dump(mode="json"), "task_id": task_id,
                            "input_id": local[u.input_id], "turn": u.turn + turns})
        for s in case.trace:
            origin[local[s.step_id]] = [(case.task_id, s.step_id)]
            data = s.model_dump(mode="json")
            for key in ("prev_step_ids", "next_step_ids", "invalidated_memory_ids",
                        "generated_memory_ids", "used_ids", "sufficient_ids"):
                data[key] = [ids[i] for i in data[key]]
            trace.append({**data, "task_id": task_id, "step_id": local[s.step_id],
                          "turn": s.turn + turns})
            if s.step_type.value == "final_answer":
                finals[case.task_id] = local[s.step_id]
    case = parse_case({"format": FORMAT, "task_id": task_id, "domain": "namespace",
                       "session": session, "memory_store": list(records.values()),
                       "trace": trace, "diagnosed_faults": history.fault_versions()})
    return Concatenated(case, origin, finals, record_of)


# -- a user's history over one store (the benchmark's cases, the README's walk) --------------

TRUE_VALUES = {"home_city": "Lisbon", "diet": "vegetarian", "employer": "Acme",
               "airline": "KLM", "budget": "$1500"}
POISON = {"home_city": "Lyon", "diet": "keto", "employer": "Globex", "airline": "Ryanair",
          "budget": "$9000"}
KINDS = ("ask", "note", "ask_note", "ask")


@dataclass
class UserHistory:
    """Sessions of one user over one memory, the fault planted in one of them, and what a
    clean history (no fault) answers: the benchmark's gold."""

    cases: list[Case]
    fault: str                          # agent id of the planted record
    fault_session: str                  # the conversation it first appears in
    clean_answers: dict[str, str]       # task → the final answer without the fault
    given_answers: dict[str, str]       # task → the final answer recorded
    clean_records: dict[str, str]       # agent id → content without the fault
    records: dict[str, str]             # agent id → content recorded (the fault's included)

    @property
    def affected(self) -> list[str]:
        """The conversations whose answer the fault changed."""
        return [t for t, a in self.given_answers.items() if a != self.clean_answers[t]]


class _Session:
    """One conversation being written (see `user_history`)."""

    def __init__(self, task: str, start: int, held: dict[str, dict[str, Any]], question: str,
                 namespace: str):
        self.task, self.ts, self.namespace = task, start + 1, namespace
        self.memories = [{**m, "task_id": task, "derived_from": [], "sufficient_from": [],
                          "last_modified_by": None} for m in held.values()]
        self.session = [{"input_id": "u_1", "task_id": task, "turn": 1, "content": question,
                         "timestamp": self.ts}]
        self.trace: list[dict[str, Any]] = []

    def step(self, step_type: str, content: str, used: list[str], *,
             sufficient: Sequence[str] = (), derivation: dict[str, Any] | None = None,
             facts: list[dict[str, Any]] | None = None, generated: Sequence[str] = ()) -> str:
        self.ts += 1
        step_id = f"s_{len(self.trace) + 1}"
        step = {**_step(self.task, step_id, step_type, self.ts, used, sufficient, generated),
                "content": content}
        if derivation is not None:
            step["derivation"] = derivation
        if facts is not None:
            step["facts"] = facts
        if self.trace:
            self.trace[-1]["next_step_ids"] = [step_id]
            step["prev_step_ids"] = [self.trace[-1]["step_id"]]
        self.trace.append(step)
        return step_id

    def case(self) -> Case:
        return parse_case({"format": FORMAT, "task_id": self.task, "domain": "assistant",
                           "session": self.session, "memory_store": self.memories,
                           "trace": self.trace, "diagnosed_faults": [],
                           "memory_namespace": self.namespace})


def _lookup(key: str, scope: str = "memory_first") -> dict[str, Any]:
    return {"fn": "lookup", "args": {"entity_id": "user", "fact_key": key, "scope": scope}}


def _template(text: str, **bind: dict[str, Any]) -> dict[str, Any]:
    return {"fn": "template", "args": {"text": text, "bind": bind}}


def _written(task: str, memory_id: str, ts: int, by: str, key: str, value: str,
             content: str, derived: Sequence[str] = (), source: str = "claim"
             ) -> dict[str, Any]:
    return {**_record(task, memory_id, ts, source=source, by=by, derived=derived),
            "content": content, "fact_key": key, "fact_value": value, "entity_id": "user"}


def user_history(sessions: int, fault_session: int, *, seed: int = 0, poisoned: bool = True,
                 namespace: str = "user-42", prefix: str = "session") -> UserHistory:
    """`sessions` conversations of one user over one store: the first ones tell the agent a
    fact each (written as a record); session `fault_session` finds a planted record giving one
    fact a wrong value (the fault, read there); the others ask a fact, save a note derived from
    one, or ask a note, picked at random, so later sessions read the fault or records derived
    from it. Every step carries a derivation, so the offline reasoner replays it. With
    `poisoned=False` the same history without the fault (the gold)."""
    import random

    rng = random.Random(seed)
    keys = list(TRUE_VALUES)
    tells = min(len(keys), max(1, fault_session))
    target = keys[seed % tells]  # a fact told before the fault
    held: dict[str, dict[str, Any]] = {}      # agent id → the record as written
    newest: dict[str, tuple[str, str]] = {}   # fact key → (agent id, value) newest record
    answers: dict[str, str] = {}
    clean = None if not poisoned else user_history(sessions, fault_session, seed=seed,
                                                   poisoned=False, namespace=namespace,
                                                   prefix=prefix)
    cases: list[Case] = []
    fault = "m_planted"
    for i in range(sessions):
        task, start = f"{prefix}_{i:02d}", i * SPAN
        if i < tells:
            kind, key = "tell", keys[i]
        elif i == fault_session:
            kind, key = "ask", target
        else:
            kind = KINDS[rng.randrange(len(KINDS))]
            key = target if rng.random() < 0.6 else keys[rng.randrange(tells)]
        if i == fault_session and poisoned:
            held[fault] = {**_written(task, fault, start, "", target, POISON[target],
                                      f"{target}: {POISON[target]}", source="injected"),
                           "last_modified_by": None}
            newest[target] = (fault, POISON[target])
        note = f"{key}_note"
        if kind == "ask_note" and note not in newest:
            kind = "note"
        question = {"tell": f"My {key} is {TRUE_VALUES[key]}.", "ask": f"What is my {key}?",
                    "note": f"Make a note about my {key}.",
                    "ask_note": f"What was my note about {key}?"}[kind]
        s = _Session(task, start, held, question, namespace)
        if kind == "tell":
            value = TRUE_VALUES[key]
            claim = s.step("claim", value, ["u_1"], sufficient=["u_1"],
                           derivation=_template(value),
                           facts=[{"entity_id": "user", "fact_key": key, "fact_value": value,
                                   "derivation": _template(value)}])
            record = f"m_{key}"
            write = s.step("memory_write", f"{key}: {value}", [claim], sufficient=[claim],
                           derivation=_template(f"{key}: {{x}}", x=_lookup(key, "cited")),
                           facts=[{"entity_id": "user", "fact_key": key, "fact_value": value,
                                   "derivation": _lookup(key, "cited")}], generated=[record])
            s.memories.append(_written(task, record, s.ts, write, key, value, f"{key}: {value}"))
            answer = f"Noted: your {key} is {value}"
            s.step("final_answer", answer, [claim],
                   derivation=_template(f"Noted: your {key} is {{x}}", x=_lookup(key, "cited")))
            newest[key] = (record, value)
        elif kind in ("ask", "ask_note"):
            fact = key if kind == "ask" else note
            record, value = newest[fact]
            read = s.step("memory_read", f"Retrieved: {record}", [record])
            label = f"your {key}" if kind == "ask" else f"your note about {key}"
            answer = f"{label[0].upper()}{label[1:]}: {value}"
            s.step("final_answer", answer, [read, record],
                   derivation=_template(f"{label[0].upper()}{label[1:]}: {{x}}",
                                        x=_lookup(fact)))
        else:  # note: a record derived from the newest record of the key
            source, value = newest[key]
            read = s.step("memory_read", f"Retrieved: {source}", [source])
            noted = f"note on {value}"
            record = f"m_{note}_{i}"
            write = s.step("memory_write", noted, [read, source],
                           derivation=_template("note on {x}", x=_lookup(key)),
                           facts=[{"entity_id": "user", "fact_key": note, "fact_value": noted,
                                   "derivation": _template("note on {x}", x=_lookup(key))}],
                           generated=[record])
            s.memories.append({**_written(task, record, s.ts, write, note, noted, noted,
                                          derived=[source], source="agent_summary")})
            answer = f"Saved: {noted}"
            s.step("final_answer", answer, [write, record],
                   derivation=_template("Saved: {x}", x=_lookup(note)))
            newest[note] = (record, noted)
        answers[task] = answer
        case = s.case()
        cases.append(case)
        for m in case.memory_store:
            held.setdefault(m.memory_id, m.model_dump(mode="json"))
    records = {a: str(m["content"]) for a, m in held.items()}
    return UserHistory(cases, fault, f"{prefix}_{fault_session:02d}",
                       clean.given_answers if clean else answers, answers,
                       clean.records if clean else records, records)


def wide_history(conversations: int, readers: int, steps: int, *, namespace: str = "wide",
                 prefix: str = "w") -> History:
    """A large namespace for the scale benchmark (bench/namespace.py scale): `conversations`
    conversations of `steps` steps each (a chain of claims over a few shared records, the
    last one a final answer), the first of which writes `shared` records every later one
    reads; a record planted before conversation 1 is read by `readers` conversations spread
    over the rest (near the end: a read, a claim citing it, the answer citing that claim)."""
    fault = "m_planted"
    every = max(1, (conversations - 1) // max(1, readers))
    reading = {1 + i * every for i in range(readers)} if readers else set()
    cases: list[Case] = []
    shared = [f"b{k}" for k in range(5)]
    for c in range(conversations):
        task, start = f"{prefix}_{c:04d}", c * SPAN
        memories = [] if c == 0 else [_record(task, m, 1, source="user_input") for m in shared]
        if c in reading:
            memories.append(_record(task, fault, 1, source="injected"))
        trace: list[dict[str, Any]] = []
        previous = "u_1"
        for i in range(1, steps + 1):
            step_id = f"s_{i:03d}"
            used = [previous]
            generated: list[str] = []
            if c == 0 and i <= len(shared):
                generated = [shared[i - 1]]
                memories.append(_record(task, shared[i - 1], start + 1 + i,
                                        source="claim", by=step_id))
                kind = "memory_write"
            elif i == steps - 2 and c in reading:  # near its end, as a late search would
                kind, used = "memory_read", [fault, *shared[:2]]
            else:
                kind = "final_answer" if i == steps else "claim"
                if c and i % 10 == 0:
                    used = [previous, shared[i % len(shared)]]
            trace.append(_step(task, step_id, kind, start + 1 + i, used, generated=generated))
            previous = step_id
        for a, b in pairwise(trace):
            a["next_step_ids"], b["prev_step_ids"] = [b["step_id"]], [a["step_id"]]
        session = [{"input_id": "u_1", "task_id": task, "turn": 1, "content": "hello",
                    "timestamp": start + 1}]
        cases.append(parse_case({"format": FORMAT, "task_id": task, "domain": "namespace",
                                 "session": session, "memory_store": memories, "trace": trace,
                                 "diagnosed_faults": [], "memory_namespace": namespace}))
    return History(cases, [fault], {})
