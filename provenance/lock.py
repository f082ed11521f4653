"""One writer per task: a lock held on the task's `:TaskLock` node in the store.

Taken by everything that writes a task version: `repair`, ingest of a new or replaced version
(staging, swap), `delete`, and a live recording (the `Recorder`, so `ingest --follow` too),
which holds it from its first event to its `end`, refreshing it at every flush. The lock
names its owner (a repair run id, an ingest or a recording id), pid,
host and purpose; a second writer is refused with who holds it. A lock left by a process that
died on this host (its pid gone) is taken over, so a `kill -9` never blocks the task. The lock
is its own node, not a property of the task record, so ingest's swap (which replaces the
record) cannot drop it while a repair holds it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from provrepair.provenance.errors import ProvrepairError, TaskConflict
from provrepair.provenance.keys import task_key
from provrepair.provenance.process import pid_alive
from provrepair.provenance.store.base import GraphStore

ACTIVITY = {"repair": "being repaired", "ingest": "being ingested", "delete": "being deleted",
            "record": "being recorded"}


def new_owner_id(purpose: str) -> str:
    return f"{purpose}-{secrets.token_hex(6)}"


@contextmanager
def task_lock(store: GraphStore, task_id: str, owner: str, purpose: str) -> Iterator[None]:
    """Hold the task's write lock for the block; TaskConflict if another writer holds it."""
    acquire(store, task_id, owner, purpose)
    try:
        yield
    except BaseException:
        # the block's own error is the one to report (a repair whose server died names the
        # statement that failed, not this release, which then fails too)
        with contextlib.suppress(ProvrepairError):
            release(store, task_id, owner)
        raise
    release(store, task_id, owner)


def release(store: GraphStore, task_id: str, owner: str) -> None:
    store.run("release_task_lock", {"task_key": task_key(task_id), "owner": owner})


def acquire(store: GraphStore, task_id: str, owner: str, purpose: str) -> None:
    current = lock_holder(store, task_id)
    stale = current["holder"] if current and is_stale(current) else ""
    rows = store.run("acquire_task_lock", {
        "task_key": task_key(task_id), "owner": owner, "pid": os.getpid(),
        "host": socket.gethostname(), "now": int(time.time() * 1000), "purpose": purpose,
        "stale_owner": stale})
    if not rows or rows[0]["holder"] != owner:
        raise _conflict(task_id, lock_holder(store, task_id))


def lock_holder(store: GraphStore, task_id: str) -> dict[str, Any] | None:
    """The lock's holder row, or None when nobody holds it."""
    rows = store.run("get_task_lock", {"task_key": task_key(task_id)})
    return rows[0] if rows and rows[0]["holder"] else None


def _conflict(task_id: str, holder: dict[str, Any] | None) -> TaskConflict:
    if holder is None:  # released between our attempt and the read: say so plainly
        return TaskConflict(f"task {task_id!r} is being written by another process; try again")
    doing = ACTIVITY.get(str(holder["purpose"]), "being written")
    return TaskConflict(f"task {task_id!r} is {doing} by {holder['holder']} (pid "
                        f"{holder['pid']} on {holder['host']}); wait for it to finish")


def is_stale(holder: dict[str, Any]) -> bool:
    if holder.get("host") != socket.gethostname():
        return False  # another machine's process: we cannot tell, so it is not stale
    pid = holder.get("pid")
    return not isinstance(pid, int) or not pid_alive(pid)
