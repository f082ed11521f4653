"""Independent-support check (docs/method.md §3) over the candidates' direct inputs.

Verdicts are computed once, against A0 only: a supported node never becomes evidence for
another candidate (no mutual validation), because independence is `p ∉ F ∪ A0`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from provrepair.provenance.vocab import EdgeLabel, MemoryStatus, StepType
from provrepair.repair.plan.graph import GraphView, Hop, Node

SUPPORT_LABELS = frozenset({EdgeLabel.SUPPORT, EdgeLabel.CITE, EdgeLabel.DERIVE,
                            EdgeLabel.SUPERSEDE})
# What an action or observation reads (used_ids) and its CHAIN predecessors: the controlling
# plans of an action, the generating actions of an observation.
STEP_INPUT_LABELS = frozenset({EdgeLabel.CITE, EdgeLabel.SUPPORT, EdgeLabel.CHAIN})
# Pred_sup: the sufficient SUPPORT, CITE, DERIVE or SUPERSEDE edges into v (only those
# can preserve), and every DERIVE edge (a memory is checkable only if it has one at all).
PRED_SUP = (SUPPORT_LABELS, frozenset({EdgeLabel.DERIVE}))
CHECKED_STEP_TYPES = frozenset({
    StepType.CLAIM, StepType.PLAN, StepType.FINAL_ANSWER, StepType.MEMORY_WRITE,
    StepType.MEMORY_DELETE, StepType.MEMORY_UPDATE, StepType.MEMORY_CONSOLIDATE})


@dataclass
class Support:
    supported: set[str] = field(default_factory=set)                 # P_sup (uids)
    evidence: dict[str, Node] = field(default_factory=dict)          # uid → the trusted p
    inherited_from: dict[str, list[Node]] = field(default_factory=dict)  # action/obs → parents
    checked: set[str] = field(default_factory=set)   # candidates checked directly (uids)


def is_checkable(v: Node, has_derive_input: bool) -> bool:
    """Claims, plans, answers, memory mutations, and active derived memories (§3)."""
    if v.is_step:
        return v.step_type in CHECKED_STEP_TYPES  # StrEnum members hash and compare as str
    return v.is_memory and v.status == MemoryStatus.ACTIVE and has_derive_input


def is_admissible(p: Node, v: Node) -> bool:
    """A same-turn user input, an active memory, an ok tool observation, or a claim.
    (A memory candidate has no turn, so a user input is never admissible for it.)"""
    if p.kind == "user_input":
        return v.is_step and p.turn == v.turn
    if p.is_memory:
        return p.status == MemoryStatus.ACTIVE
    return (p.is_a(StepType.TOOL_OBSERVATION) and p.status == "ok") or p.is_a(StepType.CLAIM)


def is_independent(p: Node, tainted: set[str]) -> bool:
    """p ∉ F ∪ A0."""
    return p.uid not in tainted


def trusted_evidence(v: Node, inputs: list[Hop], tainted: set[str],
                     rejected: list[tuple[Node, str]]) -> Node | None:
    """A sufficient, admissible, independent predecessor of v, if there is one. Steps take
    SUPPORT/CITE evidence; derived memories DERIVE/SUPERSEDE (never preserved by SUPERSEDE
    alone in practice: a superseded record is not active)."""
    labels = {"SUPPORT", "CITE"} if v.is_step else {"DERIVE", "SUPERSEDE"}
    for _, label, p, sufficient in inputs:
        if label not in labels:
            continue
        if not sufficient:
            rejected.append((p, "its edge is not marked sufficient"))
        elif not is_admissible(p, v):
            rejected.append((p, "not admissible evidence"))
        elif not is_independent(p, tainted):
            rejected.append((p, "itself faulty or affected (not independent)"))
        else:
            return p
    return None


def send_support_inputs(view: GraphView, nodes: list[Node], faults: set[str]) -> None:
    """Send the support check's query for these nodes ahead of `check_support` (the
    planner calls it per reach hop: the server runs it while reach works)."""
    view.send_support([v for v in nodes if v.uid not in faults
                       and is_checkable(v, has_derive_input=True)], *PRED_SUP)


def check_support(view: GraphView, candidates: list[Node], faults: set[str],
                  affected: set[str]) -> Support:
    """Verdicts for every node of A0 \\ F (checked directly, or inherited by actions and
    observations)."""
    tainted = faults | affected
    result = Support()
    # Only candidates that can be checkable need their inputs (PRED_SUP): reads, tool
    # actions and observations never are (they inherit), nor are retired memories.
    checkable = [v for v in candidates if is_checkable(v, has_derive_input=True)]
    inputs = _group(view.support_inputs(checkable, *PRED_SUP))
    for v in checkable:
        if not is_checkable(v, any(label == "DERIVE" for _, label, _, _ in inputs[v.uid])):
            continue
        result.checked.add(v.uid)
        evidence = trusted_evidence(v, inputs[v.uid], tainted, [])
        if evidence is not None:
            result.supported.add(v.uid)
            result.evidence[v.uid] = evidence
    inherit_tool_verdicts(view, candidates, tainted, affected, result)
    return result


def rejected_inputs(view: GraphView, v: Node, tainted: set[str]) -> list[tuple[Node, str]]:
    """For --explain: every SUPPORT/CITE/DERIVE/SUPERSEDE input of a checked candidate v,
    insufficient ones included, with why it does not preserve v (its whole input list is
    fetched here; the plan itself reads only the usable ones)."""
    rejected: list[tuple[Node, str]] = []
    trusted_evidence(v, view.in_hops([v], SUPPORT_LABELS), tainted, rejected)
    return rejected


def inherit_tool_verdicts(view: GraphView, candidates: list[Node], tainted: set[str],
                          affected: set[str], result: Support) -> None:
    """Actions inherit from their controlling plans, then observations from their actions.

    Only inputs from F ∪ A0 decide (`_inherit` looks at parents in A0 and at tainted
    reads), and reach fetched the outgoing edges of every node of A0 (F ⊆ A0): the edges
    from them are known without a query (`in_hops_from_expanded`)."""
    actions = [v for v in candidates if v.is_a(StepType.TOOL_ACTION)]
    observations = [v for v in candidates if v.is_a(StepType.TOOL_OBSERVATION)]
    inputs = _group(view.in_hops_from_expanded(actions + observations, STEP_INPUT_LABELS))
    for v in actions:
        plans = {p for _, label, p, _ in inputs[v.uid]
                 if label == "CITE" and p.is_a(StepType.PLAN)}
        _inherit(v, plans, inputs[v.uid], tainted, affected, result)
    for v in observations:
        makers = {p for _, _, p, _ in inputs[v.uid] if p.is_a(StepType.TOOL_ACTION)}
        _inherit(v, makers, inputs[v.uid], tainted, affected, result)


def _inherit(v: Node, parents: set[Node], inputs: list[Hop], tainted: set[str],
             affected: set[str], result: Support) -> None:
    """Supported iff every parent in A0 is supported, at least one is, and v reads no other
    node of F ∪ A0 directly (an argument taken straight from a tainted record is not covered
    by the parent's support)."""
    in_region = [p for p in parents if p.uid in affected]
    other_reads = [p for _, label, p, _ in inputs
                   if label in ("CITE", "SUPPORT") and p not in parents]
    if (in_region and all(p.uid in result.supported for p in in_region)
            and not any(p.uid in tainted for p in other_reads)):
        result.supported.add(v.uid)
        result.inherited_from[v.uid] = sorted(in_region, key=Node.order)


def _group(hops: list[Hop]) -> dict[str, list[Hop]]:
    grouped: dict[str, list[Hop]] = defaultdict(list)
    for hop in hops:
        grouped[hop[0].uid].append(hop)
    return grouped
