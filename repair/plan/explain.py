"""Why one node got its disposition (`provrepair plan --explain ID`), from the plan's trace."""

from __future__ import annotations

from typing import Any

from provrepair.provenance.errors import CaseError
from provrepair.repair.plan.echo import copy_reason
from provrepair.repair.plan.graph import Node
from provrepair.repair.plan.model import RepairPlan
from provrepair.repair.plan.planner import PlanTrace
from provrepair.repair.plan.support import rejected_inputs


def explain(plan: RepairPlan, trace: PlanTrace, node_id: str) -> dict[str, Any]:
    nodes = trace.view.get([node_id])
    if node_id not in nodes:
        raise CaseError(plan.task_id, "--explain", node_id, "names nothing in the task")
    node = nodes[node_id]
    return {
        "id": node.id, "kind": node.step_type or node.kind,
        "dispositions": dispositions(plan, node_id),
        "affected": _affected_reason(trace, node),
        "support": _support_reason(trace, node),
        "answer_relevance": _relevance_reason(trace, node),
        "replay": _replay_reason(plan, trace, node),
    }


def dispositions(plan: RepairPlan, node_id: str) -> list[str]:
    fields = {"deleted": plan.delete_memory_ids, "quarantined": plan.quarantine_memory_ids,
              "affected": plan.affected_ids, "supported": plan.supported_ids,
              "invalidated": plan.invalidate_claim_ids,
              "answer_relevant": plan.answer_relevant_ids, "replayed": plan.replay_step_ids,
              "preserved": plan.preserve_step_ids, "suspicious": plan.suspicious_step_ids}
    found = [name for name, ids in fields.items() if node_id in ids]
    found += [f"seed of {m}" for m, seed in plan.seeds.items() if seed == node_id]
    reason = copy_reason(plan, node_id)
    return found + ([reason] if reason else [])


def _affected_reason(trace: PlanTrace, node: Node) -> str:
    for fault_id, (memory, seed) in trace.seeds.items():
        if node.uid == memory.uid:
            return f"diagnosed faulty memory (seed {seed.id})"
        if node.uid == seed.uid:
            return f"seed r({fault_id}) = {seed.id} (t_r = {seed.ts})"
    if node.uid in trace.inherited:
        came = trace.inherited[node.uid]
        return (f"record {came.record_id!r} of the shared memory, read from the store after task "
                f"{came.from_task!r}'s plan {'removed' if came.removed else 'reached'} it "
                f"({came.from_memory})")
    if node.uid not in trace.region.nodes:
        return ("not affected: no propagation path (CHAIN never propagates) from any seed "
                "through nodes no earlier than that seed")
    return "reached from its seed: " + " ".join(_path_from_seed(trace, node))


def _path_from_seed(trace: PlanTrace, node: Node) -> list[str]:
    steps, uid = [], node.uid
    while uid in trace.region.reached_from:
        parent, label, _ = trace.region.reached_from[uid]
        steps.append(f"-[{label}]-> {trace.view.nodes[uid].id}")
        uid = parent
    fault = trace.region.origin.get(node.uid, "?")
    start = trace.view.nodes[uid]
    origin = ("a record an earlier conversation's plan reached" if start.uid in trace.inherited
              else f"fault {fault}")
    return [f"{start.id} ({origin})", *reversed(steps)]


def _support_reason(trace: PlanTrace, node: Node) -> str:
    support = trace.support
    if node.uid in support.evidence:
        p = support.evidence[node.uid]
        return f"preserved by trusted evidence {p.id} ({p.step_type or p.kind}): sufficient, " \
               "admissible and outside F ∪ A0"
    if node.uid in support.inherited_from:
        parents = ", ".join(p.id for p in support.inherited_from[node.uid])
        return f"inherits the supported verdict of {parents}"
    if node.uid in support.checked:
        tainted = set(trace.region.nodes) | {m.uid for m, _ in trace.seeds.values()}
        # in trace order: the engines list a node's inputs in an order of their own
        tried = sorted(rejected_inputs(trace.view, node, tainted), key=lambda t: t[0].order())
        if not tried:
            return "checked: no sufficient predecessor"
        return "checked, unsupported: " + "; ".join(f"{p.id} {why}" for p, why in tried)
    if node.uid in trace.region.nodes:
        return "not checkable on its own (a read, or an action/observation without a " \
               "supported controlling plan/action): unsupported"
    return "not a candidate"


def _relevance_reason(trace: PlanTrace, node: Node) -> str:
    if trace.final is None:
        return "the trace has no final answer"
    if node.uid == trace.final.uid:
        return "the final answer itself"
    if node.uid not in trace.invalidated:
        return "not invalidated, so not assessed"
    if node.uid not in trace.relevance.answer_relevant:
        return f"does not reach the final answer {trace.final.id} in the severed graph"
    path, uid = [node.id], node.uid
    while uid in trace.relevance.toward_answer:
        uid, label = trace.relevance.toward_answer[uid]
        path.append(f"-[{label}]-> {trace.view.nodes[uid].id}")
    return "reaches the final answer: " + " ".join(path)


def _replay_reason(plan: RepairPlan, trace: PlanTrace, node: Node) -> str:
    if node.id not in plan.replay_step_ids:
        return "not replayed"
    if trace.final is not None and node.uid == trace.final.uid:
        return "the final answer is always regenerated (rule 7)"
    if node.id in plan.seeds.values():
        return "a provenance seed is replayed to regenerate its record (rule 6)"
    if node.uid in trace.relevance.answer_relevant:
        return "unsupported and answer-relevant (rule 4)"
    if node.uid in trace.rewrites:
        return f"it wrote the quarantined record {trace.rewrites[node.uid]}, which is " \
            "rewritten from the repaired context, not only withdrawn (rule 8, beyond the paper)"
    dependent, label = trace.closure.needed_by.get(node.uid, ("?", "?"))
    return f"an invalidated prerequisite of {trace.view.nodes[dependent].id} ({label})" \
        if dependent in trace.view.nodes else "execution closure"
