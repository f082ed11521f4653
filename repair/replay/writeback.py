"""Write a replay back to the store (docs/method.md §5.5), crash-safe without
multi-statement transactions. The unit of work, in order:

  1. merge_repair_run (status 'writing') + merge_run_marks     the run and its plan
  2. merge_step_* / merge_memories (origin_run = run, memories 'pending'), merge_edges,
     merge_replays_edges                                        new nodes, not yet visible
  3. commit_repair_run                                          ONE statement: run finished,
                                                                every status change applied
A kill before 3 leaves the store reading exactly as before (new nodes are pending and tagged
with the run); the next `repair` rolls that run back (rollback_repair_run) and starts over.
After 3 the repair is complete. Old ids are never reused.
"""

from __future__ import annotations

from typing import Any

from provrepair.provenance.checkpoints import checkpoint
from provrepair.provenance.edges import memory_edges, step_edges
from provrepair.provenance.keys import node_uid as _uid
from provrepair.provenance.keys import task_key
from provrepair.provenance.rows import edge_row, group_node_rows, memory_row, step_row
from provrepair.provenance.state.memory import PENDING
from provrepair.provenance.state.runs import pending_props, run_params
from provrepair.provenance.store.base import GraphStore, batched
from provrepair.repair.replay.executor import ReplayResult
from provrepair.repair.replay.state import RepairState


def write_new_nodes(store: GraphStore, state: RepairState, result: ReplayResult,
                    run_id: str) -> None:
    """Step 2: the replayed steps and regenerated memories, pending, with their edges."""
    key = task_key(state.case.task_id)
    steps = [_tagged(step_row(key, s, state._pos(s)), run_id, old) for s, old in result.new_steps]
    first = len(state.memories) - len(state.new_memories)  # after every record stored before
    memories = [_tagged(memory_row(key, state.memories[n.record.memory_id], first + i), run_id,
                        n.replaces, pending=True)
                for i, n in enumerate(state.new_memories)]
    for query, rows in group_node_rows(steps).items():
        _batched(store, query, rows)
    checkpoint("after_new_steps")
    _batched(store, "merge_memories", memories)
    kinds = _kinds(state, result)
    edges = [e for s, _ in result.new_steps for e in step_edges(s, kinds.get)]
    edges += [e for n in state.new_memories for e in memory_edges(n.record)]
    _batched(store, "merge_edges", [edge_row(key, e) for e in edges])
    replays = [{"src": _uid(key, s.step_id), "dst": _uid(key, old)}
               for s, old in result.new_steps if old in state.original]
    _batched(store, "merge_replays_edges", replays)
    checkpoint("after_new_edges")


def commit(store: GraphStore, state: RepairState, result: ReplayResult, run_key: str,
           run_id: str, props: dict[str, Any]) -> None:
    """Step 3: one statement makes the run finished and applies every status change."""
    key = task_key(state.case.task_id)
    new_ids = {n.record.memory_id for n in state.new_memories}
    rows = [{"uid": _uid(key, memory_id), "status": status, "audit": True}
            for memory_id, status in state.status_changes.items() if memory_id not in new_ids]
    # a regenerated record may itself have been retired later in the same replay
    rows += [{"uid": _uid(key, m), "status": state.memories[m].status.value, "audit": False}
             for m in sorted(new_ids)]
    rows += [{"uid": _uid(key, s.step_id), "status": None, "audit": False}
             for s, _ in result.new_steps]
    checkpoint("before_commit")
    store.run("commit_repair_run", {"run_key": run_key, "run_id": run_id, "props": props,
                                    "rows": rows, **run_params("writing")})
    checkpoint("after_commit")


def _tagged(row: dict[str, Any], run_id: str, replaces: str | None, *,
            pending: bool = False) -> dict[str, Any]:
    row["props"].update(pending_props(run_id))
    if replaces is not None:
        row["props"]["replaces"] = replaces
    if pending:
        row["props"]["status"] = PENDING
    return row


def _kinds(state: RepairState, result: ReplayResult) -> dict[str, str]:
    kinds = {u.input_id: "user_input" for u in state.case.session}
    kinds.update({m: "memory" for m in state.memories})
    kinds.update({s: "step" for s in state.original})
    kinds.update({s.step_id: "step" for s, _ in result.new_steps})
    return kinds


def _batched(store: GraphStore, query: str, rows: list[dict[str, Any]]) -> None:
    for batch in batched(rows):
        store.run(query, {"rows": batch})
