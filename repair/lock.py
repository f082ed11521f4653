"""One repair at a time per task: a lock held on the task's record in the store.

The lock names the run, pid and host of its holder. A second `repair` of the same task is
refused with who holds it; a lock left by a process that died (same host, pid gone) is taken
over, so a `kill -9` never blocks the task.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager

from provrepair.provenance.errors import TaskConflict
from provrepair.provenance.keys import task_key
from provrepair.provenance.process import pid_alive
from provrepair.provenance.readback import get_task_props
from provrepair.provenance.store.base import GraphStore


@contextmanager
def repair_lock(store: GraphStore, task_id: str, run_id: str) -> Iterator[None]:
    acquire(store, task_id, run_id)
    try:
        yield
    finally:
        store.run("release_repair_lock", {"task_key": task_key(task_id), "run_id": run_id})


def acquire(store: GraphStore, task_id: str, run_id: str) -> None:
    task = get_task_props(store, task_id)
    holder = task.get("repair_lock") or ""
    stale = holder if holder and _holder_dead(task) else ""
    rows = store.run("acquire_repair_lock", {
        "task_key": task_key(task_id), "run_id": run_id, "pid": os.getpid(),
        "host": socket.gethostname(), "now": int(time.time() * 1000), "stale_run": stale})
    if not rows or rows[0]["holder"] != run_id:
        task = get_task_props(store, task_id)
        raise TaskConflict(
            f"task {task_id!r} is being repaired by run {task.get('repair_lock')!r} "
            f"(pid {task.get('repair_lock_pid')} on {task.get('repair_lock_host')}); "
            "wait for it to finish")


def _holder_dead(task: dict[str, object]) -> bool:
    if task.get("repair_lock_host") != socket.gethostname():
        return False  # another machine's process: we cannot tell, so it is not stale
    pid = task.get("repair_lock_pid")
    return not isinstance(pid, int) or not pid_alive(pid)
