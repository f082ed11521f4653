"""One fault, every conversation it reached: the plan across a shared agent memory (beyond the
paper; issue 37).

An agent's memory outlives a conversation: one namespace (a LangGraph store namespace, a mem0
user) is read and written by many conversations, each stored as its own task. A record of it
is (namespace, agent id), and every task's node of a record links to its `:AgentRecord`
(provenance/agent_records.py); each task carries its absolute time `started_at`.

The namespace plan is the paper's planner run per conversation, in time order, to a fixpoint:

- a fault (an agent id) seeds the first conversation holding the record, at its earliest
  version there;
- a planned conversation T hands each record whose latest version in T lies in T's affected
  region A0 to the NEXT conversation holding the record, if that one read it from the store
  (it holds a version it did not write): the record as it left T is what it read. There the
  node is the fault itself (T deleted it: it is a fault of that task too), or an inherited seed
  (T quarantined it, or kept it with independent support): in A0 unconditionally and never
  independent evidence, as in T's plan, and quarantined when T removed it
  (repair/plan/planner.py `inherited`). Conversations after that one read it from there;
- a conversation is planned once, when every earlier conversation is: contamination only
  flows forward in time, so the loop is one pass over the reached conversations in order.

This is, conversation by conversation, the plan of one task made by concatenating the
conversations in time order with each record read from the store joined to the version it
read (tests/integration/test_namespace_property.py checks it against the in-memory reference
on generated histories): the support check's "independent" is `∉ F ∪ A0` of the whole history,
so a record kept with support in T still taints what later conversations built on it, as a
kept node does inside one task. Conversations are ordered by `started_at`, ties by task id;
one whose trace has no timestamps sorts last. The work is the reached conversations' plans,
one statement per planned conversation to find where its records went, never the namespace.

The plan lists, per reached conversation, its rollback plan and what reached it, and above
them the conversations whose final answer was affected (invalidated): whom to tell.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from provrepair.provenance.errors import InputError, RecordNotFound
from provrepair.provenance.keys import LIVE_PREFIX, agent_record_key, node_uid, task_key
from provrepair.provenance.readback import get_task_props
from provrepair.provenance.store.base import GraphStore
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

    @property
    def order(self) -> Order:
        return task_order(self.started_at, self.task_id)

    @property
    def version(self) -> tuple[int, int, str]:
        return (self.ts, self.position, self.memory_id)

    @staticmethod
    def of(row: dict[str, Any]) -> Holder:
        return Holder(str(row["record_id"]), str(row["task_id"]), row["started_at"],
                      str(row["id"]), int(row["ts"]), int(row["position"]),
                      bool(row["produced"]))


@dataclass
class _Seeds:
    """What reached one conversation before it is planned."""

    order: Order
    faults: dict[str, RecordLink] = field(default_factory=dict)      # memory id → link
    inherited: dict[str, Inherited] = field(default_factory=dict)    # memory id → seed
    links: list[RecordLink] = field(default_factory=list)


@dataclass
class NamespaceTrace:
    """Each planned conversation's own trace (for --explain), and where each record went."""

    traces: dict[str, PlanTrace] = field(default_factory=dict)
    records: dict[tuple[str, str], str] = field(default_factory=dict)  # (task, node) → agent id


def plan_namespace(store: GraphStore, namespace: str, faults: Iterable[str], *,
                   support_check: bool = True) -> tuple[NamespacePlan, NamespaceTrace]:
    """The plan of the records `faults` (agent ids) of `namespace` across its conversations."""
    records = list(dict.fromkeys(faults))
    if not records:
        raise InputError(f"namespace {namespace!r}: --faults names no record (give the agent "
                         "ids of the faulty records, comma-separated)")
    rows = store.run("list_record_holders", {
        "record_keys": [agent_record_key(namespace, r) for r in records],
        "live_prefix": LIVE_PREFIX})
    holders: dict[str, list[Holder]] = defaultdict(list)
    for row in rows:
        holders[str(row["record_id"])].append(Holder.of(row))
    seeds: dict[str, _Seeds] = {}
    for record in records:
        if not holders[record]:
            raise RecordNotFound(
                f"memory namespace {namespace!r} holds no record {record!r}: no task of it has a "
                "memory with that agent id (`provrepair memory --task T` lists a task's)")
        first = min(holders[record], key=lambda h: (h.order, h.version))
        here = seeds.setdefault(first.task_id, _Seeds(first.order))
        here.faults[first.memory_id] = RecordLink(record_id=record, memory_id=first.memory_id,
                                                  from_task=None, reach="fault")
    return _fixpoint(store, namespace, records, seeds, support_check)


def plan_from_task(store: GraphStore, task_id: str, faults: list[str] | None = None, *,
                   support_check: bool = True) -> tuple[NamespacePlan, NamespaceTrace]:
    """The namespace plan of one conversation's faults (`plan --task T --scope namespace`):
    the records they are versions of, followed across the task's memory namespace."""
    namespace = task_namespace(store, task_id)
    fault_ids = faults if faults is not None else list(
        get_task_props(store, task_id).get("diagnosed_faults") or [])
    key = task_key(task_id)
    found = {str(r["id"]): str(r["record_id"] or r["id"]) for r in store.run(
        "get_node_records", {"uids": [node_uid(key, f) for f in fault_ids]})}
    missing = [f for f in fault_ids if f not in found]
    if missing:
        raise RecordNotFound(f"task {task_id!r} has no memory {missing[0]!r} (--faults)")
    return plan_namespace(store, namespace, [found[f] for f in fault_ids],
                          support_check=support_check)


def _fixpoint(store: GraphStore, namespace: str, records: list[str], seeds: dict[str, _Seeds],
              support_check: bool) -> tuple[NamespacePlan, NamespaceTrace]:
    trace = NamespaceTrace()
    planned: list[tuple[str, RepairPlan, _Seeds]] = []
    queue = [(s.order, task) for task, s in seeds.items()]
    heapq.heapify(queue)
    while queue:
        _, task = heapq.heappop(queue)
        here = seeds[task]
        plan, plan_trace = compute_plan(store, task, list(here.faults),
                                        support_check=support_check,
                                        inherited=list(here.inherited.values()), echo=False)
        trace.traces[task] = plan_trace
        planned.append((task, plan, here))
        reached = [n.uid for n in plan_trace.region.nodes.values() if n.is_memory]
        rows = store.run("list_reached_records", {"uids": reached, "live_prefix": LIVE_PREFIX}) \
            if reached else []
        holders: dict[str, list[Holder]] = defaultdict(list)
        for row in rows:
            holders[str(row["record_id"])].append(Holder.of(row))
        for record, group in holders.items():
            for h in group:
                trace.records[(h.task_id, h.memory_id)] = record
            target = _hand_on(task, here.order, plan, group)
            if target is None:
                continue
            link, holder = target
            if holder.task_id not in seeds:
                seeds[holder.task_id] = _Seeds(holder.order)
                heapq.heappush(queue, (holder.order, holder.task_id))
            _add(seeds[holder.task_id], link)
    return _assemble(store, namespace, records, planned, trace), trace


def _hand_on(task: str, order: Order, plan: RepairPlan, group: list[Holder]
             ) -> tuple[RecordLink, Holder] | None:
    """Where the record leaves `task`: its latest version here, if the plan reached it, goes
    to the next conversation holding the record, if that one read it (did not write it)."""
    mine = [h for h in group if h.task_id == task]
    later = [h for h in group if h.order > order]
    if not mine or not later:
        return None
    source = max(mine, key=lambda h: h.version)
    if source.memory_id not in plan.affected_ids:
        return None
    after = min(h.order for h in later)
    read = [h for h in later if h.order == after and not h.produced]
    if not read:
        return None  # the next conversation wrote the record afresh: it read no earlier version
    holder = min(read, key=lambda h: h.version)
    reach: Reach = ("fault" if source.memory_id in plan.delete_memory_ids
                    else "removed" if source.memory_id in plan.quarantine_memory_ids
                    else "affected")
    return RecordLink(record_id=source.record_id, memory_id=holder.memory_id, from_task=task,
                      from_memory=source.memory_id, reach=reach), holder


def _add(seeds: _Seeds, link: RecordLink) -> None:
    if link.reach == "fault":
        seeds.faults.setdefault(link.memory_id, link)
        return
    if link.memory_id in seeds.inherited or link.memory_id in seeds.faults:
        return
    assert link.from_task is not None and link.from_memory is not None
    seeds.inherited[link.memory_id] = Inherited(
        memory_id=link.memory_id, record_id=link.record_id, from_task=link.from_task,
        from_memory=link.from_memory, removed=link.reach == "removed")
    seeds.links.append(link)


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
