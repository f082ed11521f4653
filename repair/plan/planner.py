"""Assemble the rollback plan from the stages (docs/method.md §1-4), check invariants.

    seeds.py      resolve_seeds           cypher/repair/resolve_seeds.cypher
    affected.py   reach_affected          forward edges, per hop      (graph.py edge cache:
    support.py    check_support           backward edges              cypher/repair/
    closure.py    close_invalidation      forward edges               list_out_edges.cypher,
    relevance.py  answer_relevant         forward edges, per hop      list_in_edges.cypher)
    closure.py    exec_closure            backward edges, per hop
    rules.py      the appendix table, one function per rule
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import provrepair.repair.plan.rules as rules
from provrepair.provenance.errors import TaskConflict
from provrepair.provenance.gc_pause import gc_paused
from provrepair.provenance.order import last_final_answer
from provrepair.provenance.readback import get_task_props
from provrepair.provenance.store.base import GraphStore, ReadAhead
from provrepair.provenance.validate import require_faults
from provrepair.provenance.vocab import EdgeLabel, MemoryStatus, StepType
from provrepair.repair.plan.affected import Affected, reach_affected
from provrepair.repair.plan.closure import Closure, close_invalidation, exec_closure
from provrepair.repair.plan.echo import suspected_copies, with_copies
from provrepair.repair.plan.graph import E_PROP, GraphView, Node
from provrepair.repair.plan.invariants import check_plan
from provrepair.repair.plan.model import Inherited, RepairPlan
from provrepair.repair.plan.relevance import Relevance, answer_relevant
from provrepair.repair.plan.seeds import resolve_seeds
from provrepair.repair.plan.support import (
    STEP_INPUT_LABELS,
    Support,
    check_support,
    send_support_inputs,
)


@dataclass
class PlanTrace:
    """Everything the stages found, kept for --explain."""

    view: GraphView
    seeds: dict[str, tuple[Node, Node]]
    region: Affected
    support: Support
    invalidated: dict[str, Node]
    relevance: Relevance
    closure: Closure
    final: Node | None
    removed: set[str]
    rewrites: dict[str, str]    # producer uid → the quarantined record it rewrites (rule 8)
    # uid → a record an earlier conversation's plan reached (repair/plan/namespace.py)
    inherited: dict[str, Inherited] = field(default_factory=dict)


def compute_plan(store: GraphStore, task_id: str, faults: list[str] | None = None, *,
                 support_check: bool = True, rewrite_quarantined: bool = True,
                 quarantine_copies: bool = False, inherited: Sequence[Inherited] = (),
                 echo: bool = True) -> tuple[RepairPlan, PlanTrace]:
    """The rollback plan of a stored task; `faults` overrides its diagnosed faults.
    `support_check=False` is the paper's ablation "without support check" (P_sup = ∅).
    `rewrite_quarantined=False` leaves out rule 8 (beyond the paper): the paper's own plan,
    the method `paper` (docs/method.md §4).
    `inherited`: records of a shared memory an earlier conversation's plan reached (beyond
    the paper, repair/plan/namespace.py): seeds of A0 beside the faults, tainted like them
    (never independent evidence), neither deleted nor replayed as faults are; quarantined
    when the earlier plan removed them (and still active here), else kept. `echo=False`:
    without the echo sweep (no `suspected_copies`).
    After planning, the echo sweep (echo.py) reports the records that carry a fault's value
    with no recorded edge (`suspected_copies`); `quarantine_copies` quarantines them.
    The cyclic GC is paused meanwhile (provenance/gc_pause.py): a plan allocates in bursts
    and creates no cycles, and its full passes cost a 1k-node region ~15 ms every other plan.
    Its reads are pipelined (`store.read_ahead()`): the support check's statement of each
    reach hop, and the task-wide lists, run on the server while the planner works."""
    with gc_paused(), store.read_ahead() as reads:
        plan, trace = _compute_plan(store, task_id, faults, support_check, rewrite_quarantined,
                                    reads, inherited)
    trace.view.reads = None  # --explain reads on after the plan's connection went back
    if echo:  # the namespace plan leaves it out: one statement less per conversation
        plan = with_copies(plan, suspected_copies(store, plan), quarantine=quarantine_copies)
    return plan, trace


def _compute_plan(store: GraphStore, task_id: str, faults: list[str] | None,
                  support_check: bool, rewrite_quarantined: bool, reads: ReadAhead,
                  inherited: Sequence[Inherited]) -> tuple[RepairPlan, PlanTrace]:
    task = get_task_props(store, task_id)
    fault_ids = list(dict.fromkeys(faults if faults is not None else task.get("diagnosed_faults", [])))
    if not inherited:
        require_faults(task_id, fault_ids)
    view = GraphView(store, task_id, reads)
    seeds = resolve_seeds(view, fault_ids)
    carried = _inherited_nodes(view, inherited)
    tainted = {m.uid for m, _ in seeds.values()} | set(carried)

    def send_support(nodes: list[Node]) -> None:
        send_support_inputs(view, nodes, tainted)

    starts = {**seeds, **{i.memory_id: (n, n) for n, i in carried.values()}}
    region = reach_affected(view, starts, send_support if support_check else None)
    view.send_task_lists()
    own = _reached_here(view, carried, region)
    candidates = [v for v in region.nodes.values() if v.uid not in tainted or v.uid in own]
    support = (check_support(view, candidates, tainted, set(region.nodes)) if support_check
               else Support())
    unsupported = rules.preserve_independently_supported_candidate(region.nodes.values(),
                                                                   support.supported)
    deleted = rules.delete_diagnosed_faulty_memory(m for m, _ in seeds.values())
    quarantined = rules.quarantine_unsupported_affected_memory(
        (v for v in unsupported if v.uid not in carried or v.uid in own), deleted)
    quarantined |= {n.uid for n, i in carried.values()
                    if i.removed and n.status == MemoryStatus.ACTIVE}
    invalidated = close_invalidation(view, [v for v in unsupported if v.is_step])
    final = _final_answer(view)
    removed = deleted | quarantined
    relevance = answer_relevant(view, invalidated, removed, final)
    rewrites = _producers(view, quarantined, invalidated) if rewrite_quarantined else {}
    start = (rules.replay_unsupported_answer_relevant_node(relevance.answer_relevant)
             | rules.regenerate_final_answer(final)
             | rules.replay_faulty_memory_provenance_seed(s for _, s in seeds.values())
             | rules.rewrite_quarantined_memory(view.nodes[u] for u in rewrites))
    closure = exec_closure(view, [view.nodes[u] for u in start], invalidated, removed)
    trace = PlanTrace(view, seeds, region, support, invalidated, relevance, closure, final, removed,
                      rewrites, {uid: i for uid, (_, i) in carried.items()})
    plan, positions = _assemble(view, trace, deleted, quarantined)
    plan.inherited = list(inherited)
    check_plan(plan, steps=positions, faults=fault_ids, final_id=final.id if final else None,
               memories={n.id for n in view.nodes.values() if n.is_memory})
    return plan, trace


def _inherited_nodes(view: GraphView, inherited: Sequence[Inherited]
                     ) -> dict[str, tuple[Node, Inherited]]:
    """uid → (node, why) of the inherited records; each must be a memory of the task."""
    nodes = view.get(i.memory_id for i in inherited)
    carried: dict[str, tuple[Node, Inherited]] = {}
    for record in inherited:
        node = nodes.get(record.memory_id)
        if node is None or not node.is_memory:
            raise TaskConflict(f"task {view.task_id!r} holds no memory {record.memory_id!r} "
                               f"(record {record.record_id!r} of the shared memory): it was "
                               "replaced since the namespace was planned; plan it again")
        carried[node.uid] = (node, record)
    return carried


def _reached_here(view: GraphView, carried: dict[str, tuple[Node, Inherited]],
                  region: Affected) -> set[str]:
    """The inherited records this task's own reach enters as well (an input of theirs lies
    in A0: a record the conversation wrote from what it read): the task's rules decide them
    as any node of A0 (support, rule 2), a removal handed on only adds to that. The edges
    from A0 are known: the reach fetched every A0 node's outgoing edges."""
    hops = view.in_hops_from_expanded((n for n, _ in carried.values()), E_PROP)
    return {anchor.uid for anchor, _, far, _ in hops
            if far.uid in region.nodes and far.uid != anchor.uid}


def _producers(view: GraphView, quarantined: set[str],
               invalidated: dict[str, Node]) -> dict[str, str]:
    """Step uid → the id of the quarantined record it wrote (a PRODUCE edge), for rule 8.
    A producer may lie outside A0 (a record reached only by DERIVE), so the records' whole
    inputs are read; in the one statement that also reads those the execution closure needs
    (the invalidated observations', closure.py), not in one more."""
    records = [view.nodes[u] for u in quarantined]
    view.prefetch_in([*records, *(n for n in invalidated.values()
                                  if n.is_a(StepType.TOOL_OBSERVATION))])
    hops = view.in_hops(records, [EdgeLabel.PRODUCE])
    return {p.uid: m.id for m, _, p, _ in hops if p.is_step}


def _final_answer(view: GraphView) -> Node | None:
    """v_final: the last final_answer of the trace (by ts, ties by trace position)."""
    return last_final_answer(view.final_answers(), Node.order)


def _assemble(view: GraphView, trace: PlanTrace, deleted: set[str],
              quarantined: set[str]) -> tuple[RepairPlan, dict[str, int]]:
    """The plan's fields in trace order, and every step id of the task → its position."""
    positions = view.step_positions()
    replay = set(trace.closure.replay)
    refreshed = _refreshed_observations(view, trace.invalidated, replay)
    suspicious = rules.invalidate_unsupported_non_answer_relevant_node(
        set(trace.invalidated), replay, refreshed)
    touched = {view.nodes[u].id for u in set(trace.invalidated) | replay}
    preserve = [i for i in sorted(positions, key=positions.__getitem__) if i not in touched]

    def ids(uids: set[str]) -> list[str]:
        return [n.id for n in sorted((view.nodes[u] for u in uids), key=Node.order)]

    return RepairPlan(
        task_id=view.task_id, delete_memory_ids=ids(deleted),
        quarantine_memory_ids=ids(quarantined), invalidate_claim_ids=ids(set(trace.invalidated)),
        replay_step_ids=[n.id for n in sorted(trace.closure.replay.values(),
                                              key=lambda n: (n.position, n.id))],
        preserve_step_ids=preserve, redundant_step_ids=[], suspicious_step_ids=ids(suspicious),
        seeds={m.id: s.id for m, s in trace.seeds.values()},
        affected_ids=ids(set(trace.region.nodes)), supported_ids=ids(trace.support.supported),
        answer_relevant_ids=ids(trace.relevance.answer_relevant)), positions


def _refreshed_observations(view: GraphView, invalidated: dict[str, Node],
                            replay: set[str]) -> set[str]:
    """Invalidated observations whose generating action is replayed (they are refreshed)."""
    observations = [n for n in invalidated.values() if n.is_a(StepType.TOOL_OBSERVATION)]
    return {v.uid for v, _, p, _ in view.in_hops(observations, STEP_INPUT_LABELS)
            if p.is_a(StepType.TOOL_ACTION) and p.uid in replay}


__all__ = ["PlanTrace", "RepairPlan", "compute_plan"]
