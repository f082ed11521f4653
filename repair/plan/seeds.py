"""Seed resolution (docs/method.md §1): cypher/repair/resolve_seeds.cypher + the order."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from provrepair.provenance.errors import CaseError
from provrepair.provenance.state.memory import memory_params
from provrepair.repair.plan.graph import GraphView, Node


def resolve_seed(fault: Node, failed_mutations: Sequence[Node], producers: Sequence[Node]) -> Node:
    """r(m): the earliest failed mutation (by ts, ties by trace position), else the
    producer, else m itself (a root store fault such as an injected wrong-user record)."""
    if failed_mutations:
        return min(failed_mutations, key=Node.order)
    if producers:
        # The format allows one producer per memory in practice; if a trace names several,
        # the earliest is where the record came into being.
        return min(producers, key=Node.order)
    return fault


def resolve_seeds(view: GraphView, fault_ids: Sequence[str]) -> dict[str, tuple[Node, Node]]:
    """fault id → (m, r(m)). Raises CaseError for an id that is not a memory of the task."""
    uids = [view.uid(f) for f in fault_ids]
    found: dict[str, dict[str, list[Node]]] = defaultdict(lambda: defaultdict(list))
    for row in view.rows("resolve_seeds", {"uids": uids, **memory_params()}):
        found[row["fault_uid"]][row["relation"]].append(view.node(row))
    seeds: dict[str, tuple[Node, Node]] = {}
    for fault_id, uid in zip(fault_ids, uids, strict=True):
        selves = found[uid]["self"]
        if not selves:
            raise CaseError(view.task_id, "diagnosed_faults", fault_id, "names nothing in the task")
        fault = selves[0]
        if not fault.is_memory:
            raise CaseError(view.task_id, "diagnosed_faults", fault_id,
                            f"names a {fault.kind.replace('_', ' ')}, not a memory")
        seeds[fault_id] = (fault, resolve_seed(fault, found[uid]["failed_mutation"],
                                               found[uid]["producer"]))
    return seeds
