"""The echo sweep (beyond the paper; issue 31): records that carry a diagnosed fault's
asserted value although no recorded edge connects them to it.

A recorder misses flow: an agent copies a wrong value into a second record outside the
recorder's view (a summary written by another process, a cache, a retried write). The plan
cannot reach such a copy (contamination travels only along recorded edges), so it survives
repair and the wrong value comes back. After planning, the task's active recorded memories
that assert a fault's value — the same entity, key and value, or the fault's whole content
repeated (cypher/repair/list_value_copies.cypher) — and that the plan neither reaches
(`affected_ids`) nor removes are reported as `suspected_copies` (copy → the fault whose value
it carries). With `quarantine_copies` they are quarantined too, and `plan --explain` gives
that reason. Reported, never silently acted on: a value can be legitimately repeated.
"""

from __future__ import annotations

from provrepair.provenance.keys import node_uid, task_key
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan.model import RepairPlan

REASON = "suspected copy of {fault}: it asserts the fault's value, and no recorded edge reaches it"


def suspected_copies(store: GraphStore, plan: RepairPlan) -> dict[str, str]:
    """Copy id → the diagnosed fault whose value it carries (the first, in store order)."""
    faults = list(plan.seeds)
    if not faults:
        return {}
    key = task_key(plan.task_id)
    rows = store.run("list_value_copies", {"task_key": key,
                                           "fault_uids": [node_uid(key, f) for f in faults]})
    reached = {*plan.affected_ids, *plan.delete_memory_ids, *plan.quarantine_memory_ids}
    copies: dict[str, str] = {}
    for row in rows:
        if row["id"] not in reached:
            copies.setdefault(str(row["id"]), str(row["fault_id"]))
    return copies


def with_copies(plan: RepairPlan, copies: dict[str, str], *, quarantine: bool) -> RepairPlan:
    """The plan reporting `copies`; with `quarantine`, quarantining them as well."""
    update: dict[str, object] = {"suspected_copies": copies}
    if quarantine:
        update["quarantine_memory_ids"] = [*plan.quarantine_memory_ids,
                                           *(c for c in copies if c not in plan.quarantine_memory_ids)]
    return plan.model_copy(update=update)


def copy_reason(plan: RepairPlan, node_id: str) -> str | None:
    fault = plan.suspected_copies.get(node_id)
    return None if fault is None else REASON.format(fault=fault)
