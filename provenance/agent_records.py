"""One record of a shared agent memory, across the conversations that read and wrote it.

A memory namespace (the case's `memory_namespace`: a LangGraph store namespace, a mem0 user)
is read and written by many conversations, each stored as its own task. In the agent's store
a record is (namespace, agent id), the agent id being a memory node's `record_id`, else its
`memory_id` (docs/case-format.md, "Agent ids"). Every memory node of a task of a namespace
has an `OF_RECORD` edge to that record's `:AgentRecord {namespace, record_id}`, and the task
its absolute times `started_at` and `ended_at` (its earliest and latest input or step
timestamps), so a query follows a record from the conversation that wrote it into every
conversation that read it (repair/plan/namespace.py).

One idempotent statement (cypher/namespace/link_agent_records.cypher) links what a writer
stored: ingest runs it on the staged copy before the swap (the swap makes the task and its
links visible together), the Recorder and the event-stream loader as they flush, the live OTel
exporter as it extends a conversation. A task without a namespace is its own scope: nothing
is linked. `provrepair db migrate` links tasks stored before this existed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from provrepair.provenance.keys import LIVE_PREFIX, agent_record_key, node_uid

if TYPE_CHECKING:
    from provrepair.provenance.models import Case

BATCH = 2000  # rows a statement links (provenance/store/base.py BATCH_ROWS's order)
# A case whose timestamps only order its events (a transcript's: messages carry no clock)
# says so in its `world`: its task has no absolute time (untimed: `started_at` unset).
CLOCK, ORDER_ONLY = "provrepair.clock", "order"


class GraphStore(Protocol):
    """What linking needs of a store (provenance/store/base.py; not imported: the store's
    migration imports this module)."""

    def run(self, name: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]: ...


def agent_id(props: dict[str, Any]) -> str:
    """The agent's own id of a memory node (its properties, or a dumped record)."""
    return str(props.get("record_id") or props.get("id") or props["memory_id"])


def link_agent_records(store: GraphStore, key: str, namespace: str | None,
                       memories: Iterable[dict[str, Any]], times: Iterable[int] = ()) -> None:
    """Link the memory nodes (`memories`: their properties, `id` and `record_id`) of the task
    stored under `key` (live or staged) to their records of `namespace`, and move the task's
    `started_at` back to the earliest of `times` (its inputs' and steps' timestamps) and
    its `ended_at` on to the latest. Nothing for a task without a namespace. Idempotent: a
    writer calls it for what it wrote."""
    if not namespace:
        return
    times = list(times)
    rows = [{"uid": node_uid(key, str(m["id"])), "namespace": namespace,
             "record_id": agent_id(m), "record_key": agent_record_key(namespace, agent_id(m))}
            for m in memories]
    start, end = min(times, default=None), max(times, default=None)
    for first in range(0, max(1, len(rows)), BATCH):
        store.run("link_agent_records", {"task_key": key, "started_at": start,
                                         "ended_at": end, "rows": rows[first:first + BATCH]})


def link_node_rows(store: GraphStore, key: str, namespace: str | None,
                   rows: Iterable[dict[str, Any]]) -> None:
    """The same for node rows as the writers build them (`{"uid", "props"}`)."""
    props = [r["props"] for r in rows]
    link_agent_records(store, key, namespace, [p for p in props if p["kind"] == "memory"],
                       [p["ts"] for p in props if p["kind"] != "memory"])


def link_case(store: GraphStore, key: str, case: Case) -> None:
    """Every memory node of a whole case stored under `key` (no time if its clock only
    orders its events)."""
    link_agent_records(
        store, key, case.memory_namespace,
        ({"id": m.memory_id, "record_id": m.record_id} for m in case.memory_store),
        [] if case.world.get(CLOCK) == ORDER_ONLY else
        [*(u.timestamp for u in case.session), *(s.timestamp for s in case.trace)])


def backfill_agent_records(store: GraphStore) -> int:
    """Link the tasks of a namespace stored before their nodes were linked (a data migration,
    run by `provrepair db migrate`); the number of tasks linked."""
    tasks = store.run("list_unlinked_namespace_tasks", {"live_prefix": LIVE_PREFIX})
    for task in tasks:
        link_stored_task(store, task["task_key"], task["namespace"])
    return len(tasks)


def link_stored_task(store: GraphStore, key: str, namespace: str) -> None:
    """Every recorded node of the task stored under `key` (a live capture whose namespace a
    later request named first, a task stored before links existed)."""
    nodes = [r["props"] for r in store.run("list_task_nodes", {"task_key": key})
             if r["props"].get("origin_run") is None]
    task = store.run("get_task", {"task_key": key})
    world = json.loads(task[0]["props"].get("world_json") or "{}") if task else {}
    timed = world.get(CLOCK) != ORDER_ONLY
    link_agent_records(store, key, namespace, [p for p in nodes if p["kind"] == "memory"],
                       [p["ts"] for p in nodes if p["kind"] != "memory" and timed])
