"""The echo sweep over a memory namespace (beyond the paper; issue 31).

One agent memory (a LangGraph store namespace, a mem0 user) is shared by many conversations,
each stored as its own task; the case names it (`memory_namespace`, docs/case-format.md). A
wrong value copied outside the recorder's view may sit in another conversation's records,
where no edge of the planned task can reach it. With `--scope namespace`, after planning, the
active records of every other task of the namespace (visible now: provenance/state/memory.py
`visible_now`) that assert a diagnosed fault's value and have no trusted source of their own
stating it, by the rule of the task-level sweep (repair/plan/echo.py;
cypher/repair/list_namespace_copies.cypher), are reported as the plan's
`namespace_copies`, each naming its task. Reported only: `repair --quarantine-copies`
quarantines them, in their own tasks (repair/scope_sweep.py).

A record of another task with the fault's own agent id (docs/case-format.md, "Agent ids") is
no copy: in a shared memory it is the fault itself, as that conversation recorded it (it read
it, or wrote it first). It is listed too (`same_record`), and the sweep deletes it there as the
repair deletes the fault, so both tasks' patches agree on the one record of the agent's store.

Scope `task` (the default) is the task alone, as before. A task that declares no namespace is
its own scope, and asking for its namespace is an error naming it (NoNamespace).
"""

from __future__ import annotations

from provrepair.provenance.errors import NoNamespace
from provrepair.provenance.keys import LIVE_PREFIX, task_key
from provrepair.provenance.readback import get_task_props
from provrepair.provenance.state.memory import memory_params, visible_now
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan.echo import Stated, fault_values, first_asserted, independently_stated
from provrepair.repair.plan.model import NamespaceCopy, RepairPlan, Scope

SCOPES: tuple[Scope, ...] = ("task", "namespace")
# why a sweep removed a record of another task: {fault} names the fault, its task and run
SAME_RECORD_REASON = ("the diagnosed fault {fault} itself: the same record of the shared "
                      "memory, deleted by that repair")


def task_namespace(store: GraphStore, task_id: str) -> str:
    """The memory namespace the task declares (TaskNotFound, NoNamespace: naming the task)."""
    namespace = get_task_props(store, task_id).get("memory_namespace")
    if not namespace:
        raise NoNamespace(f"task {task_id!r} declares no memory namespace, so --scope "
                          "namespace has nothing to sweep: give its case a memory_namespace "
                          "(ingest --replace), or use --scope task")
    return str(namespace)


def namespace_copies(store: GraphStore, task_id: str, faults: list[str],
                     namespace: str) -> list[NamespaceCopy]:
    """Active records of the namespace's other tasks asserting a fault's value, by the rule
    of the task-level sweep (echo.py: normalised and bounded, and no trusted source of their
    own stating it): one per record (the first fault it echoes), by task, then store order."""
    stated = fault_values(store, task_id, faults)
    if not stated:
        return []
    rows = store.run("list_namespace_copies", {
        "task_key": task_key(task_id), "namespace": namespace, "live_prefix": LIVE_PREFIX,
        **memory_params()})
    matched: dict[str, tuple[str, Stated, Stated]] = {}
    for row in rows:
        record = Stated.of(row)
        fault = first_asserted(record, stated) if visible_now(row) else None
        if fault is not None:
            matched[record.uid] = (str(row["task_id"]), record, fault)
    # the fault itself, as another conversation recorded it, is never excused as sourced
    sourced = independently_stated(store, {u: f for u, (_, r, f) in matched.items()
                                           if not _same_record(r, f)})
    return [NamespaceCopy(task_id=task, memory_id=record.id, fault_id=fault.id,
                          same_record=_same_record(record, fault))
            for u, (task, record, fault) in matched.items() if u not in sourced]


def _same_record(record: Stated, fault: Stated) -> bool:
    """The record has the fault's agent id (docs/case-format.md, "Agent ids")."""
    return (record.record_id or record.id) == (fault.record_id or fault.id)


def with_scope(store: GraphStore, plan: RepairPlan, scope: Scope) -> RepairPlan:
    """The plan with the echo sweep of `scope`: for `namespace`, the copies in the other
    tasks of the task's namespace, read now."""
    if scope == "task":
        return plan.model_copy(update={"scope": "task", "memory_namespace": None,
                                       "namespace_copies": []})
    namespace = task_namespace(store, plan.task_id)
    copies = namespace_copies(store, plan.task_id, list(plan.seeds), namespace)
    return plan.model_copy(update={"scope": "namespace", "memory_namespace": namespace,
                                   "namespace_copies": copies})
