"""The echo sweep over a memory namespace (beyond the paper; issue 31).

One agent memory (a LangGraph store namespace, a mem0 user) is shared by many conversations,
each stored as its own task; the case names it (`memory_namespace`, docs/case-format.md). A
wrong value copied outside the recorder's view may sit in another conversation's records,
where no edge of the planned task can reach it. With `--scope namespace`, after planning, the
active records of every other task of the namespace (visible now: provenance/state/memory.py
`visible_now`) that assert a diagnosed fault's value by the rule of the task-level sweep
(repair/plan/echo.py; cypher/repair/list_namespace_copies.cypher) are reported as the plan's
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
from provrepair.provenance.keys import LIVE_PREFIX, node_uid, task_key
from provrepair.provenance.readback import get_task_props
from provrepair.provenance.state.memory import memory_params, visible_now
from provrepair.provenance.store.base import GraphStore
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
    """Active records of the namespace's other tasks asserting a fault's value: one per
    record (the first fault it echoes, in store order), by task, then store order."""
    if not faults:
        return []
    key = task_key(task_id)
    rows = store.run("list_namespace_copies", {
        "task_key": key, "namespace": namespace, "live_prefix": LIVE_PREFIX,
        "fault_uids": [node_uid(key, f) for f in faults], **memory_params()})
    copies: dict[tuple[str, str], NamespaceCopy] = {}
    for row in rows:
        ident = (str(row["task_id"]), str(row["id"]))
        if ident not in copies and visible_now(row):
            copies[ident] = NamespaceCopy(task_id=ident[0], memory_id=ident[1],
                                          fault_id=str(row["fault_id"]),
                                          same_record=bool(row["same_record"]))
    return list(copies.values())


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
