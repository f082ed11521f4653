"""The echo sweep (beyond the paper; issues 31, 39): records that carry a diagnosed fault's
value although no recorded edge connects them to it.

A recorder misses flow: an agent copies a wrong value into a second record outside the
recorder's view (a summary written by another process, a cache, a retried write). The plan
cannot reach such a copy (contamination travels only along recorded edges), so it survives
repair and the wrong value comes back. After planning, the task's active memories
(cypher/repair/list_value_copies.cypher; visible: recorded, or written by a committed
repair) that assert a fault's value and that the plan neither reaches (`affected_ids`) nor
removes are reported as `suspected_copies` (copy → the fault whose value it carries). With
`quarantine_copies` they are quarantined too, and `plan --explain` gives that reason.
Reported, never silently acted on: a value can be legitimately repeated.

A copy is a record whose value came from the fault, not one that merely states it
(docs/method.md, "The echo sweep"):
- it asserts the value (`asserted`, values.py: normalised for case, Unicode and white
  space; bounded to whole tokens and whole numbers): where both state a structured fact,
  the same entity and key with the same value; otherwise the fault's whole content inside
  its own ("Budget: $500" is not inside "Budget: $5000");
- and it has no trusted, independent source stating that value: the step that wrote it
  (PRODUCE) cites no user input of its turn, and no tool observation that succeeded, whose
  text states the value (cypher/repair/list_copy_evidence.cypher; outside the plan's
  region). "I always fly economy", written from the user's own message saying so, is the
  user's statement, not a copy of a fault saying "economy".
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from provrepair.provenance.keys import node_uid, task_key
from provrepair.provenance.state.memory import memory_params, visible_now
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.vocab import StepStatus, StepType
from provrepair.repair.plan.model import RepairPlan
from provrepair.repair.plan.values import same_value, states

REASON = "suspected copy of {fault}: it asserts the fault's value, and no recorded edge reaches it"
USER_INPUT = "user_input"  # the node kind of a user input (provenance/edges.py NodeKind)


@dataclass(frozen=True)
class Stated:
    """What a memory node states: its content and its structured fact."""

    id: str
    uid: str
    content: str | None
    entity_id: str | None
    fact_key: str | None
    fact_value: Any
    record_id: str | None = None

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Stated:
        return cls(str(row["id"]), str(row["uid"]), row.get("content"), row.get("entity_id"),
                   row.get("fact_key"), row.get("fact_value"), row.get("record_id"))

    @property
    def values(self) -> list[str]:
        """What a source may state to support a record asserting this fault's value: its
        fact value, or its whole content (a record can be matched by either)."""
        return [v for v in (None if self.fact_value is None else str(self.fact_value),
                            self.content) if v]


def asserted(record: Stated, fault: Stated) -> bool:
    """`record` asserts `fault`'s value. Where both state a structured fact, the facts
    decide: the same entity, key and (normalised) value. Otherwise the text does: the
    fault's whole content, normalised and bounded, inside the record's content."""
    if fault.fact_value is not None and record.fact_value is not None:
        return (record.entity_id, record.fact_key) == (fault.entity_id, fault.fact_key) \
            and same_value(record.fact_value, fault.fact_value)
    return states(record.content, fault.content)


def fault_values(store: GraphStore, task_id: str, faults: Iterable[str]) -> list[Stated]:
    """What each fault states, in the order given (absent ids left out)."""
    key = task_key(task_id)
    uids = [node_uid(key, f) for f in faults]
    found = {row["uid"]: Stated.of(row) for row in store.run("list_fault_values", {"uids": uids})}
    return [found[u] for u in uids if u in found]


def first_asserted(record: Stated, faults: list[Stated]) -> Stated | None:
    return next((f for f in faults if asserted(record, f)), None)


def independently_stated(store: GraphStore, candidates: Mapping[str, Stated],
                         tainted: Collection[str] = ()) -> set[str]:
    """The uids of the candidate records (uid → the fault whose value each asserts) whose
    writer cites a trusted input stating that value: a user input of its turn, or a tool
    observation that succeeded, not among `tainted` (ids the plan reached)."""
    if not candidates:
        return set()
    rows = store.run("list_copy_evidence", {
        "uids": list(candidates), "input_kind": USER_INPUT,
        "observation_type": StepType.TOOL_OBSERVATION.value, "ok": StepStatus.OK.value})
    return {row["uid"] for row in rows if row["evidence_id"] not in tainted
            and any(states(row["evidence"], v) for v in candidates[row["uid"]].values)}


def suspected_copies(store: GraphStore, plan: RepairPlan) -> dict[str, str]:
    """Copy id → the diagnosed fault whose value it carries (the first, in the plan's
    order of faults)."""
    faults = fault_values(store, plan.task_id, plan.seeds)
    if not faults:
        return {}
    reached = {*plan.affected_ids, *plan.delete_memory_ids, *plan.quarantine_memory_ids}
    rows = store.run("list_value_copies", {"task_key": task_key(plan.task_id),
                                           "fault_uids": [f.uid for f in faults],
                                           **memory_params()})
    matched: dict[str, tuple[Stated, Stated]] = {}
    for row in rows:
        if row["id"] in reached or not visible_now(row):
            continue
        record = Stated.of(row)
        fault = first_asserted(record, faults)
        if fault is not None:
            matched[record.uid] = (record, fault)
    sourced = independently_stated(store, {u: f for u, (_, f) in matched.items()}, reached)
    return {record.id: fault.id for u, (record, fault) in matched.items() if u not in sourced}


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
