"""One fault, every conversation it reached: the plan across a shared agent memory (beyond the
paper; issue 37).

An agent's memory outlives a conversation: one namespace (a LangGraph store namespace, a mem0
user) is read and written by many conversations, each stored as its own task. A record of it
is (namespace, agent id), and every task's node of a record links to its `:AgentRecord`
(provenance/agent_records.py); each task carries its absolute time `started_at`.

The namespace plan is our planner (dependency_guided: rules 1-8, docs/method.md §4) run per
conversation, in time order, to a fixpoint:

- a fault (an agent id) seeds where each line of the record's versions starts (`_origins`):
  every version written afresh (before its writer read the record), and every other version
  read (from outside the recordings); a fault named in a task (`plan_from_task`) seeds that
  task's node;
- a planned conversation T hands each copy of a record in its affected region A0 on to
  every copy of the same version in another conversation ("Versions"), and to every copy
  read of a version no conversation wrote in a conversation that had not ended when T
  started. There the node is the fault itself (T deleted it: it is a fault of that task
  too), or an inherited seed (T quarantined it, or kept it with independent support): in A0
  unconditionally and never independent evidence, as in T's plan, and quarantined when T
  removed it (repair/plan/planner.py `inherited`; one the conversation's own reach enters
  too is decided by its rules, a removal handed on only adding to them);
- a conversation's plan is the one made with every other conversation planned: a least
  fixpoint, computed as a pass over the reached conversations in time order (the sequential
  fixpoint; how it is computed: "Rounds" below), made again while a conversation hands a
  version to one that started before it.

Versions. Which version of a record a conversation read is known by its content (a JSON
structure's canonical form), the same in every recording of the namespace: the copy
written and every copy read of it (the loaders record what a read returned). A version is
handed on to every copy of it: a conversation whose snapshot predates a later write still
read the earlier version, and a conversation running at once with the writer may have
started before it. Time order cannot tell these apart (a loader stamps a read with the
reader's clock), so it decides nothing here but the order plans are made in; a version
handed to a conversation that started earlier (already planned) is kept and the walk made
again with it (`_handed_back`): seeds only grow, so this ends, at the least fixpoint. A
copy written is handed to every copy another conversation wrote with the same text too
(that one's later reads of its own text may have returned this one's). A copy read whose
content no other conversation wrote (the store before the recordings, a writer not
recorded, a recording that renders what it read unlike the writer's, no text at all) may be
any version: every reached copy of a conversation that started before the copy's
conversation ended (`ended_at`, its latest time; unknown, or a transcript's order-only
clock: any) is handed to it. Two versions with the same content are one here: both are
handed on, an over-approximation, never a miss.

This is, conversation by conversation, the plan of one task made by concatenating the
conversations in time order with each record read from the store joined to the version it
read (tests/integration/test_namespace_property.py checks it against the in-memory reference
on generated histories, stale snapshots and conversations running at once among them): the
support check's "independent" is `∉ F ∪ A0` of the whole history, so a record kept with
support in T still taints what later conversations built on it, as a kept node does inside
one task. Conversations are ordered by `started_at`, ties by task id;
one whose trace has no timestamps sorts last. The work is the reached conversations' plans,
never the namespace.

Rounds. Planned one after another, N reached conversations cost N plans' round trips (a
hundred: ×24 the same region planned inside one task, on a loaded machine). So plans are
made in rounds, all of a round at once (repair/plan/lockstep.py: each plan in a thread, their
statements merged into one per query), and the pass in time order (`_Walk`) checks them:
it walks on while the next conversation's plan was made with exactly the seeds the earlier
ones' plans hand it, and stops at the first that was not (the frontier: its seeds are exact,
since every earlier plan is). A round plans the frontier and, in the first SPECULATE rounds,
every later conversation the walk reaches on guessed seeds: a conversation not planned with
its seeds yet hands on for certain each of its seeds (a seed is in A0 whatever else the
plan finds, deleted if a fault, quarantined if inherited removed and active), and probably
what a plan made with other seeds handed on (`_guess`). A guess only decides what is
planned: a plan counts once the walk gives it exactly the seeds it was made with, so the
result is the sequential fixpoint whatever was guessed (the property test compares them),
and the frontier moves on every round. A fault read by a hundred conversations is guessed
whole: one round (`bench/namespace.py scale`); records derived from it, which no guess sees
before a plan of the conversation that wrote them, are handed on as the first round's plans
found them: a second round (`bench/namespace.py rounds`); a chain the guesses still miss
costs a round a conversation, as planning in turn did.

The plan lists, per reached conversation, its rollback plan and what reached it, and above
them the conversations whose final answer was affected (invalidated): whom to tell.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from provrepair.provenance.errors import InputError, ProvrepairError, RecordNotFound
from provrepair.provenance.keys import LIVE_PREFIX, agent_record_key, node_uid, task_key
from provrepair.provenance.readback import get_task_props
from provrepair.provenance.store.base import GraphStore, batched
from provrepair.provenance.vocab import EdgeLabel, MemoryStatus
from provrepair.repair.plan.lockstep import Lockstep
from provrepair.repair.plan.model import (
    AffectedAnswer,
    ConversationPlan,
    Inherited,
    NamespacePlan,
    Reach,
    RecordDisposition,
    RecordLink,
    RepairPlan,
)
from provrepair.repair.plan.planner import PlanTrace, compute_plan
from provrepair.repair.plan.scope import task_namespace

Order = tuple[bool, int, str]
# Rounds that also plan the conversations whose seeds are guessed (module docstring).
SPECULATE = 3


def task_order(started_at: int | None, task_id: str) -> Order:
    """A conversation's place in time: by `started_at`, ties by task id, untimed last."""
    return (started_at is None, started_at or 0, task_id)


@dataclass(frozen=True)
class Holder:
    """One task's node of one record of the shared memory (list_record_holders.cypher)."""

    record_id: str
    task_id: str
    started_at: int | None
    memory_id: str
    ts: int
    position: int
    produced: bool   # the task wrote this version (else it read it from the store)
    status: str | None = None
    digest: str = ""  # of its content: which version it is, across conversations
    ended_at: int | None = None  # its task's latest time

    @cached_property
    def order(self) -> Order:
        return task_order(self.started_at, self.task_id)

    @cached_property
    def rank(self) -> tuple[Order, tuple[int, int, str]]:
        """Its place among a record's holders: its task's in time, then its version's."""
        return (self.order, self.version)

    @property
    def version(self) -> tuple[int, int, str]:
        return (self.ts, self.position, self.memory_id)

    @staticmethod
    def of(row: dict[str, Any]) -> Holder:
        return Holder(str(row["record_id"]), str(row["task_id"]), row["started_at"],
                      str(row["id"]), int(row["ts"]), int(row["position"]),
                      bool(row["produced"]), row["status"],
                      content_digest(row["content"]) if row["content"]
                      else f"unknown {row['task_id']} {row['id']}",  # matches nothing
                      row["ended_at"])


def content_digest(content: str | None) -> str:
    """A version's identity across conversations ("Versions"): its content's digest, a JSON
    structure's as canonical JSON (recordings write its keys in their own order)."""
    text = content or ""
    if text[:1] in ("{", "["):
        with contextlib.suppress(ValueError, RecursionError):  # opens like JSON: as it is
            text = json.dumps(json.loads(text), sort_keys=True, ensure_ascii=False,
                              separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class _Seeds:
    """What reached one conversation before it is planned."""

    order: Order
    faults: dict[str, RecordLink] = field(default_factory=dict)      # memory id → link
    inherited: dict[str, Inherited] = field(default_factory=dict)    # memory id → seed
    links: list[RecordLink] = field(default_factory=list)

    def copy(self) -> _Seeds:
        return _Seeds(self.order, dict(self.faults), dict(self.inherited), list(self.links))

    def key(self) -> tuple[tuple[str, ...], tuple[Inherited, ...]]:
        """What the planner is given: the faults and the inherited records, in order."""
        return tuple(self.faults), tuple(self.inherited.values())


@dataclass
class _Planned:
    """A conversation's latest plan and the seeds it was made with."""

    key: tuple[tuple[str, ...], tuple[Inherited, ...]]
    plan: RepairPlan
    trace: PlanTrace


@dataclass(frozen=True)
class _Outcome:
    """What a plan decided about a conversation's nodes, as the hand-on reads it."""

    affected_ids: list[str]   # A0, in trace order
    affected: frozenset[str]
    deleted: frozenset[str]
    quarantined: frozenset[str]

    @staticmethod
    def of(plan: RepairPlan) -> _Outcome:
        return _Outcome(plan.affected_ids, frozenset(plan.affected_ids),
                        frozenset(plan.delete_memory_ids), frozenset(plan.quarantine_memory_ids))


@dataclass
class _Group:
    """The holders of one record, by task, and the tasks' places in time, sorted; and its
    versions ("Versions"): the copies of each content, and the copies read whose content
    no other conversation wrote."""

    holders: list[Holder]
    by_task: dict[str, list[Holder]]
    orders: list[Order]
    copies: dict[str, list[Holder]]    # digest → its copies (read or written), in time order
    unmatched: list[Holder]            # copies read of a version no other one wrote

    @staticmethod
    def of(holders: list[Holder]) -> _Group:
        by_task: dict[str, list[Holder]] = defaultdict(list)
        copies: dict[str, list[Holder]] = defaultdict(list)
        writers: dict[str, set[str]] = defaultdict(set)  # digest → the tasks that wrote it
        for h in sorted(holders, key=lambda h: h.rank):
            by_task[h.task_id].append(h)
            copies[h.digest].append(h)
            if h.produced:
                writers[h.digest].add(h.task_id)
        unmatched = [h for c in copies.values() for h in c
                     if not h.produced and not writers.get(h.digest, set()) - {h.task_id}]
        return _Group(holders, dict(by_task), sorted({h.order for h in holders}),
                      dict(copies), sorted(unmatched, key=lambda h: h.rank))

    def first_holder(self, digest: str) -> Order:
        """The place in time of the first conversation holding a copy of this version."""
        return self.copies[digest][0].order


@dataclass
class _Known:
    """What the rounds have read of the shared memory: each record's holders (all of them:
    a record's group, once read, is complete), the record of each linked memory node, and
    the memory nodes whose records were asked for."""

    groups: dict[str, _Group] = field(default_factory=dict)   # record id → its holders
    record_of: dict[tuple[str, str], str] = field(default_factory=dict)  # (task, id) → record
    read: set[str] = field(default_factory=set)

    def add(self, rows: list[dict[str, Any]]) -> None:
        found: dict[str, list[Holder]] = defaultdict(list)
        for row in rows:
            found[str(row["record_id"])].append(Holder.of(row))
        for record, holders in found.items():
            group = self.groups.setdefault(record, _Group.of(holders))
            for h in group.holders:
                self.record_of[(h.task_id, h.memory_id)] = record


@dataclass
class NamespaceTrace:
    """Each planned conversation's own trace (for --explain), and where each record went."""

    traces: dict[str, PlanTrace] = field(default_factory=dict)
    records: dict[tuple[str, str], str] = field(default_factory=dict)  # (task, node) → agent id
    rounds: int = 0      # rounds of plans made ("Rounds")
    walks: int = 1       # walks in time order (one more for each hand-back, "Versions")
    plans_made: int = 0  # plans made, those on seeds guessed wrong included


def plan_namespace(store: GraphStore, namespace: str, faults: Iterable[str], *,
                   support_check: bool = True, speculate: bool = True
                   ) -> tuple[NamespacePlan, NamespaceTrace]:
    """The plan of the records `faults` (agent ids) of `namespace` across its conversations.
    `speculate=False` plans one conversation a round, the earliest whose seeds are exact:
    the same plan, with the round trips of every conversation in turn (the benchmark's
    comparison, bench/namespace.py scale)."""
    records = list(dict.fromkeys(faults))
    known = _holders(store, namespace, records, f"namespace {namespace!r}: --faults names no "
                     "record (give the agent ids of the faulty records, comma-separated)")
    seeds: dict[str, _Seeds] = {}
    updates = _updates(store, namespace, records)
    for record in records:
        if record not in known.groups:
            raise RecordNotFound(
                f"memory namespace {namespace!r} holds no record {record!r}: no task of it has a "
                "memory with that agent id (`provrepair memory --task T` lists a task's)")
        for holder in _origins(known.groups[record], updates):
            _seed_fault(seeds, record, holder)
    return _fixpoint(store, namespace, records, seeds, known, support_check, speculate)


def plan_from_task(store: GraphStore, task_id: str, faults: list[str] | None = None, *,
                   support_check: bool = True) -> tuple[NamespacePlan, NamespaceTrace]:
    """The namespace plan of one conversation's faults (`plan --task T --scope namespace`):
    the named memory nodes, faults of that task, followed across the task's memory
    namespace (the records they are versions of, from that task on)."""
    namespace = task_namespace(store, task_id)
    fault_ids = faults if faults is not None else list(
        get_task_props(store, task_id).get("diagnosed_faults") or [])
    key = task_key(task_id)
    found = {str(r["id"]): str(r["record_id"] or r["id"]) for r in store.run(
        "get_node_records", {"uids": [node_uid(key, f) for f in fault_ids]})}
    missing = [f for f in fault_ids if f not in found]
    if missing:
        raise RecordNotFound(f"task {task_id!r} has no memory {missing[0]!r} (--faults)")
    records = list(dict.fromkeys(found[f] for f in fault_ids))
    known = _holders(store, namespace, records, f"task {task_id!r}: --faults names no memory "
                     "(and the task has no diagnosed_faults)")
    seeds: dict[str, _Seeds] = {}
    for f in fault_ids:
        holder = next(h for h in known.groups[found[f]].by_task[task_id] if h.memory_id == f)
        _seed_fault(seeds, found[f], holder)
    return _fixpoint(store, namespace, records, seeds, known, support_check, True)


def _holders(store: GraphStore, namespace: str, records: list[str], empty: str) -> _Known:
    """Every holder of these records, read once (`empty`: the error when none is named)."""
    if not records:
        raise InputError(empty)
    known = _Known()
    known.add(store.run("list_record_holders", {
        "record_keys": [agent_record_key(namespace, r) for r in records],
        "live_prefix": LIVE_PREFIX}))
    return known


def _origins(group: _Group, updates: set[tuple[str, str]]) -> list[Holder]:
    """The versions of a faulty record (an agent id: which version was poisoned is not
    said) the fault is seeded at: where each line of its versions starts. Every version
    written afresh (not an update: no copy of the record the conversation holds is an input
    of it or of the step that wrote it, `updates` by (task key, memory id); a recording's
    times cannot say, a read copy carries the version's time in a case file), and every
    version read that no version written afresh has (it came from outside the recordings:
    the store before them, an unrecorded writer, a writer that wrote it back after reading
    another), at the first conversation holding it. An update is reached through its
    writer's plan from the copy it was written from, as inside one task. The copies of a
    seeded version in other conversations are reached from it (`_hand_on`).
    Over-approximates (the fault may be in one line only), never misses a line."""
    fresh = [h for h in group.holders
             if h.produced and (task_key(h.task_id), h.memory_id) not in updates]
    lines = {h.digest for h in fresh}
    return sorted(fresh, key=lambda h: h.rank) + [
        h for order in group.orders for h in group.by_task[order[2]]
        if not h.produced and h.digest not in lines and group.first_holder(h.digest) == order]


# The edges that carry a record's content into what is written from it (`_origins`).
CONTENT_LABELS = sorted(label.value for label in (EdgeLabel.SUPPORT, EdgeLabel.CITE,
                                                  EdgeLabel.DERIVE, EdgeLabel.CONSOLIDATE))


def _updates(store: GraphStore, namespace: str, records: list[str]) -> set[tuple[str, str]]:
    """(task key, memory id) of the versions of these records written as updates."""
    return {(str(r["task_key"]), str(r["id"])) for r in store.run("list_record_updates", {
        "record_keys": [agent_record_key(namespace, r) for r in records],
        "labels": CONTENT_LABELS, "live_prefix": LIVE_PREFIX})}


def _seed_fault(seeds: dict[str, _Seeds], record: str, holder: Holder) -> None:
    here = seeds.setdefault(holder.task_id, _Seeds(holder.order))
    here.faults[holder.memory_id] = RecordLink(record_id=record, memory_id=holder.memory_id,
                                               from_task=None, reach="fault")


def _fixpoint(store: GraphStore, namespace: str, records: list[str], first: dict[str, _Seeds],
              known: _Known, support_check: bool, speculate: bool
              ) -> tuple[NamespacePlan, NamespaceTrace]:
    """Plan in rounds until every reached conversation's plan was made with the seeds the
    walk in time order gives it (module docstring, "Rounds")."""
    plans: dict[str, _Planned] = {}
    trace = NamespaceTrace()
    extra: dict[tuple[str, str], tuple[Handing, Holder]] = {}
    while True:
        walk = _Walk(first, extra.values())
        while (frontier := walk.advance(plans, known)) is not None:
            todo = [frontier]
            if speculate and trace.rounds < SPECULATE:
                todo += walk.guessed(plans, known)
            trace.rounds += 1
            trace.plans_made += len(todo)
            results = Lockstep(store).run_all([_plan_job(t, s, support_check) for t, s in todo])
            if isinstance(results[0], ProvrepairError):
                raise results[0]  # the frontier's seeds are exact: the error is the plan's
            for (task, here), result in zip(todo, results, strict=True):
                if isinstance(result, ProvrepairError):  # a guess that failed: no plan kept
                    plans.pop(task, None)
                    continue
                plan, plan_trace = result
                plan_trace.view.store = store  # --explain reads on, after the round
                plans[task] = _Planned(here.key(), plan, plan_trace)
            _read_records(store, [plans[t] for t, _ in todo if t in plans], known)
        if not _handed_back(walk, extra, plans):
            break
        trace.walks += 1
    planned: list[tuple[str, RepairPlan, _Seeds]] = []
    for task, here in walk.done:
        plan, trace.traces[task] = plans[task].plan, plans[task].trace
        planned.append((task, plan, here))
        for record in _reached(task, plan.affected_ids, known):
            for h in known.groups[record].holders:
                trace.records[(h.task_id, h.memory_id)] = record
    return _assemble(store, namespace, records, planned, trace), trace


def _plan_job(task: str, here: _Seeds, support_check: bool) -> Callable[[GraphStore], Any]:
    """Our planner (rules 1-8) on one conversation with its seeds (a job of the lockstep)."""
    def job(store: GraphStore) -> tuple[RepairPlan, PlanTrace] | ProvrepairError:
        try:
            return compute_plan(store, task, list(here.faults), support_check=support_check,
                                inherited=list(here.inherited.values()), echo=False)
        except ProvrepairError as exc:
            return exc
    return job


class _Walk:
    """The conversations reached, in time order, each with the seeds the earlier ones hand
    it: the sequential fixpoint, over the plans made so far. `done` is the prefix whose
    plans were made with exactly the seeds the walk gives them (final: their seeds come
    only from earlier ones of it); the walk waits at the first conversation without such a
    plan (the frontier: its seeds are exact), and `guessed` walks on beyond it on guesses."""

    def __init__(self, first: dict[str, _Seeds],
                 extra: Iterable[tuple[Handing, Holder]] = ()):
        self.done: list[tuple[str, _Seeds]] = []
        self.seeds = {task: s.copy() for task, s in first.items()}  # reached, not done yet
        self.queue = [(s.order, task) for task, s in self.seeds.items()]
        heapq.heapify(self.queue)
        _hand(self.seeds, self.queue, list(extra), None)
        # what the done conversations handed to earlier ones (`_handed_back`)
        self.back: list[tuple[Handing, Holder]] = []
        self.given: Given = {}  # what was handed to every copy of a version (`_hand_on`)

    def advance(self, plans: dict[str, _Planned], known: _Known) -> tuple[str, _Seeds] | None:
        """Walk on while the next conversation's plan matches; the frontier, or None when
        every reached conversation is done."""
        while self.queue:
            task = self.queue[0][1]
            here, done = self.seeds[task], plans.get(task)
            if done is None or done.key != here.key():
                return task, here
            heapq.heappop(self.queue)
            del self.seeds[task]
            self.back += _hand(self.seeds, self.queue,
                               _handed_on(task, here.order, _Outcome.of(done.plan), known,
                                          self.given), here.order)
            self.done.append((task, here))
        return None

    def guessed(self, plans: dict[str, _Planned], known: _Known) -> list[tuple[str, _Seeds]]:
        """The conversations after the frontier whose plans do not match the seeds the walk
        gives them, on a copy of the walk that takes each unmatched one's hand-on from
        `_guess`."""
        seeds = {task: s.copy() for task, s in self.seeds.items()}
        queue, given = list(self.queue), dict(self.given)
        stale: list[tuple[str, _Seeds]] = []
        while queue:
            _, task = heapq.heappop(queue)
            here, done = seeds[task], plans.get(task)
            if done is not None and done.key == here.key():
                handed = _handed_on(task, here.order, _Outcome.of(done.plan), known, given)
            else:
                handed = _guess(task, here, done, known, given)
                stale.append((task, here))
            _hand(seeds, queue, handed, here.order)
        return stale[1:]  # the first is the frontier


def _hand(seeds: dict[str, _Seeds], queue: list[tuple[Order, str]],
          handed: list[tuple[Handing, Holder]], after: Order | None
          ) -> list[tuple[Handing, Holder]]:
    """Give each conversation after `after` (all, if None) what was handed to it; what was
    handed to earlier ones is returned."""
    back: list[tuple[Handing, Holder]] = []
    for link, holder in handed:
        if after is not None and holder.order < after:
            back.append((link, holder))
            continue
        if holder.task_id not in seeds:
            seeds[holder.task_id] = _Seeds(holder.order)
            heapq.heappush(queue, (holder.order, holder.task_id))
        _add(seeds[holder.task_id], link)
    return back


def _handed_back(walk: _Walk, extra: dict[tuple[str, str], tuple[Handing, Holder]],
                 plans: dict[str, _Planned]) -> bool:
    """Keep in `extra` what a walk's conversations handed to earlier ones that their seeds
    lacked (a copy of a version read by a conversation that started before the one that
    wrote it, "Versions"); whether there was any (then the walk is made again, with them)."""
    done = dict(walk.done)
    probes: dict[str, _Seeds] = {}
    grew = False
    for link, holder in walk.back:
        if holder.task_id in done and _holds(_Outcome.of(plans[holder.task_id].plan),
                                             holder.memory_id, link.reach):
            continue
        probe = probes.get(holder.task_id)
        if probe is None:
            mine = done.get(holder.task_id)
            probe = probes[holder.task_id] = mine.copy() if mine else _Seeds(holder.order)
        if _add(probe, link):
            extra[(holder.task_id, holder.memory_id)] = (link, holder)
            grew = True
    return grew


def _holds(outcome: _Outcome, memory_id: str, reach: Reach) -> bool:
    """Whether a plan already has this node as a hand-on of `reach` would make it: in its
    A0 (then a seed adds nothing to the reach: its threshold is its own time, no smaller
    than the one it was reached with, nor to the support check: it is not independent
    evidence), and removed as a removed one, deleted as a fault. Such a hand-on back to an
    earlier conversation changes nothing (a reader handing its copy back to the writer)."""
    if memory_id not in outcome.affected:
        return False
    return (reach == "affected" or memory_id in outcome.deleted
            or (reach == "removed" and memory_id in outcome.quarantined))


def _guess(task: str, here: _Seeds, done: _Planned | None, known: _Known, given: Given
           ) -> list[tuple[Handing, Holder]]:
    """What a conversation not planned with its seeds yet will hand on, as far as can be
    told: each seed is in its A0 whatever the plan, deleted if a fault, quarantined if
    inherited removed and active (planner.py), so it is handed on for certain; and what a
    plan made with other seeds handed on.
    Only a guess: the walk plans every conversation again until its seeds are exact."""
    seed_ids = [*here.faults, *here.inherited]
    status = {h.memory_id: h.status for r in _seed_records(here)
              for h in known.groups[r].by_task.get(task, ())}
    certain = _Outcome(
        affected_ids=seed_ids, affected=frozenset(seed_ids), deleted=frozenset(here.faults),
        quarantined=frozenset(i.memory_id for i in here.inherited.values()
                              if i.removed and status.get(i.memory_id) == MemoryStatus.ACTIVE))
    records = _seed_records(here)
    handed = [h for r in records for h in _hand_on(task, here.order, certain, known.groups[r],
                                                    given)]
    if done is not None:
        handed += _handed_on(task, here.order, _Outcome.of(done.plan), known, given,
                             skip=set(records))
    return handed


def _seed_records(here: _Seeds) -> list[str]:
    return list(dict.fromkeys([*(link.record_id for link in here.faults.values()),
                               *(i.record_id for i in here.inherited.values())]))


def _reached(task: str, affected_ids: list[str], known: _Known) -> list[str]:
    """The records of the shared memory whose nodes in `task` a plan reached (its A0), in
    trace order."""
    found = (known.record_of.get((task, node_id)) for node_id in affected_ids)
    return list(dict.fromkeys(r for r in found if r is not None))


def _handed_on(task: str, order: Order, outcome: _Outcome, known: _Known, given: Given,
               skip: set[str] | None = None) -> list[tuple[Handing, Holder]]:
    return [h for record in _reached(task, outcome.affected_ids, known)
            if not skip or record not in skip
            for h in _hand_on(task, order, outcome, known.groups[record], given)]


def _read_records(store: GraphStore, done: list[_Planned], known: _Known) -> None:
    """The records of the memory nodes these plans reached, with every holder of each (one
    statement per batch of nodes, whatever the number of plans): the walk reads them."""
    uids = [n.uid for d in done for n in d.trace.region.nodes.values()
            if n.is_memory and n.uid not in known.read]
    known.read.update(uids)
    for batch in batched(list(dict.fromkeys(uids))):
        known.add(store.run("list_reached_records", {"uids": batch, "live_prefix": LIVE_PREFIX}))


def _hand_on(task: str, order: Order, outcome: _Outcome, group: _Group, given: Given
             ) -> list[tuple[Handing, Holder]]:
    """Where the record leaves `task` ("Versions"): each of its copies here the plan reached
    goes to every copy of the same version another conversation read (before or after this
    one: conversations run at once), a copy written here to every copy another conversation
    wrote with the same content too (which of the two a later read of it returned cannot
    be told), and to every copy read of a version no other
    conversation wrote (which version it is cannot be told: any it might be) in a
    conversation that had not ended when this one started. One link per copy reached, the
    gravest (a fault, then removed, then affected).

    A version read by a hundred conversations would be handed by each to each: `given`
    keeps, per version, the gravest reach a conversation handed to every copy of it (this
    walk's), so one handing no graver gives only that conversation's own copies, which it
    did not hand to itself (the receivers keep the gravest: the same seeds)."""
    best: dict[tuple[str, str], tuple[Handing, Holder]] = {}
    for source in group.by_task.get(task, ()):
        if source.memory_id not in outcome.affected:
            continue
        reach: Reach = ("fault" if source.memory_id in outcome.deleted
                        else "removed" if source.memory_id in outcome.quarantined
                        else "affected")
        # a copy written elsewhere gets only a written one: two writers of one content
        copies = [h for h in group.copies[source.digest] if source.produced or not h.produced]
        version = (source.record_id, source.digest, source.produced)
        prior = given.get(version)
        if prior is not None and prior[1] != task and GRAVITY.index(reach) <= prior[0]:
            copies = [h for h in copies if h.task_id == prior[1]]
        else:
            given[version] = (GRAVITY.index(reach), task)
            copies = [h for h in copies if h.task_id != task]
        copies += [h for h in group.unmatched if h.task_id != task and _may_read(order, h)]
        for holder in copies:
            key = (holder.task_id, holder.memory_id)
            old = best.get(key)
            if old is None or GRAVITY.index(reach) > GRAVITY.index(old[0].reach):
                best[key] = (Handing(source.record_id, holder.memory_id, task,
                                     source.memory_id, reach), holder)
    return sorted(best.values(), key=lambda x: x[1].rank)


GRAVITY: tuple[Reach, ...] = ("affected", "removed", "fault")
# (record, version, from a written copy) → (gravity, task): the gravest reach a task handed
# every copy of it
Given = dict[tuple[str, str, bool], tuple[int, str]]


@dataclass(frozen=True, slots=True)
class Handing:
    """A copy of a record handed from one conversation to another (its `RecordLink`, made
    only when it gives the receiver something: a fault read by a hundred conversations is
    handed by each to each)."""

    record_id: str
    memory_id: str
    from_task: str
    from_memory: str
    reach: Reach

    def link(self) -> RecordLink:
        return RecordLink(record_id=self.record_id, memory_id=self.memory_id,
                          from_task=self.from_task, from_memory=self.from_memory,
                          reach=self.reach)


def _may_read(writer: Order, copy: Holder) -> bool:
    """Whether a copy whose version cannot be told may be one a conversation that started
    at `writer` held: unless that one started after the copy's conversation ended (times
    unknown: it may)."""
    untimed, started, _ = writer
    return untimed or copy.ended_at is None or started <= copy.ended_at


def _add(seeds: _Seeds, link: Handing) -> bool:
    """Give a conversation what another handed it; whether its seeds grew (a record handed
    on as affected and later as removed is removed: the gravest holds)."""
    if link.reach == "fault":  # replaces what was handed before (a fault is deleted)
        if link.memory_id in seeds.faults:
            return False
        seeds.faults[link.memory_id] = link.link()
        seeds.inherited.pop(link.memory_id, None)
        return True
    if link.memory_id in seeds.faults:
        return False
    old = seeds.inherited.get(link.memory_id)
    if old is not None and (old.removed or link.reach != "removed"):
        return False
    seeds.inherited[link.memory_id] = Inherited(
        memory_id=link.memory_id, record_id=link.record_id, from_task=link.from_task,
        from_memory=link.from_memory, removed=link.reach == "removed")
    seeds.links.append(link.link())
    return True


def _assemble(store: GraphStore, namespace: str, records: list[str],
              planned: list[tuple[str, RepairPlan, _Seeds]],
              trace: NamespaceTrace) -> NamespacePlan:
    finals = {task: trace.traces[task].final for task, _, _ in planned}
    uids = [n.uid for n in finals.values() if n is not None]
    content = {str(r["uid"]): r["content"] for r in store.run("get_node_records", {"uids": uids})} \
        if uids else {}
    conversations: list[ConversationPlan] = []
    for task, plan, seeds in planned:
        final = finals[task]
        conversations.append(ConversationPlan(
            task_id=task, started_at=None if seeds.order[0] else seeds.order[1],
            reached_by=[*seeds.faults.values(), *seeds.links],
            final_answer_id=final.id if final is not None else None,
            answer=content.get(final.uid) if final is not None else None,
            answer_affected=final is not None and final.id in plan.invalidate_claim_ids,
            plan=plan))
    count = store.run("count_namespace_tasks", {"namespace": namespace,
                                                "live_prefix": LIVE_PREFIX})
    return NamespacePlan(
        namespace=namespace, faults=records,
        conversations_in_namespace=int(count[0]["tasks"]) if count else 0,
        affected_answers=[AffectedAnswer(task_id=c.task_id, started_at=c.started_at,
                                         final_answer_id=c.final_answer_id, answer=c.answer or "")
                          for c in conversations if c.answer_affected and c.final_answer_id],
        records=_dispositions(planned, trace), conversations=conversations)


SEVERITY = ("affected", "quarantine", "delete")


def _dispositions(planned: list[tuple[str, RepairPlan, _Seeds]],
                  trace: NamespaceTrace) -> list[RecordDisposition]:
    """One line per record the plans reached: deleted if a plan deletes a version of it,
    else quarantined if one quarantines one, else affected (kept); named by the first
    conversation that reached it."""
    found: dict[str, RecordDisposition] = {}
    for task, plan, _ in planned:
        removed = {**dict.fromkeys(plan.quarantine_memory_ids, "quarantine"),
                   **dict.fromkeys(plan.delete_memory_ids, "delete")}
        for memory_id in plan.affected_ids:
            record = trace.records.get((task, memory_id))
            if record is None:
                continue
            what = removed.get(memory_id, "affected")
            old = found.get(record)
            if old is None:
                found[record] = RecordDisposition(record_id=record, disposition=what,  # type: ignore[arg-type]
                                                  task_id=task, memory_id=memory_id)
            elif SEVERITY.index(what) > SEVERITY.index(old.disposition):
                old.disposition = what  # type: ignore[assignment]
    return list(found.values())


def conversation_path(plan: NamespacePlan, task_id: str) -> list[tuple[str, RecordLink]]:
    """How the fault came to `task_id`: (conversation, the record it read that first reached
    it), from the fault's first holder to it."""
    by_task = {c.task_id: c for c in plan.conversations}
    path: list[tuple[str, RecordLink]] = []
    current: str | None = task_id
    while current is not None and current in by_task and all(t != current for t, _ in path):
        link = by_task[current].reached_by[0]
        path.append((current, link))
        current = link.from_task
    return list(reversed(path))
