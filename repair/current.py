"""The task as it stands after its repairs: every memory record the store holds, the ones
repairs wrote included (the case read back leaves those out), with what changed each."""

from __future__ import annotations

from typing import Any

from provrepair.provenance.keys import task_key
from provrepair.provenance.readback import get_task_props
from provrepair.provenance.store.base import GraphStore


def current_memories(store: GraphStore, task_id: str) -> list[dict[str, Any]]:
    """Records in store order (recorded ones by position, then repair-written ones); nodes of
    a repair that never committed are not part of the task and are left out."""
    get_task_props(store, task_id)  # TaskNotFound, naming the task
    rows = store.run("list_task_nodes", {"task_key": task_key(task_id)})
    memories = [r["props"] for r in rows if r["props"].get("kind") == "memory"
                and (r["props"].get("origin_run") is None or r["props"].get("committed"))]
    memories.sort(key=lambda p: (p.get("origin_run") is not None, p["position"]))
    return [{"memory_id": p["id"], "content": p.get("content", ""), "status": p["status"],
             "supersedes": p.get("supersedes"), "written_by_run": p.get("origin_run"),
             "changed_by": p.get("origin_run") or p.get("status_run")}
            for p in memories]
