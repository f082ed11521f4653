"""Write whole cases to the store: staged, then swapped in by one atomic statement.

The unit of work for one case, under the task's write lock (provenance/lock.py: two writers
of one task serialize; the second is refused), in this order; every statement is idempotent
except the CREATE batches of 3, which write only into the staging copy that 1 cleared:
  1. delete_task(staging key)          clear a staged copy left by an interrupted run
  2. merge_task(staging key)           the staged task record (complete = false)
  3. create_staged_* (UNWIND $rows)    nodes, then edges, under the staging key; CREATE, not
                                       MERGE: the staging copy was cleared in 1, every row is new;
                                       the content hash is computed between the batches
  3b. merge_task(staging key)          the staged record's content hash
  4. count_staged_elements             the staged copy holds exactly the case (a batch re-sent
                                       after a lost reply would have doubled rows: refused)
  4b. link_agent_records               a task of a memory namespace: its memory nodes linked
                                       to the shared records (provenance/agent_records.py)
  5. merge_evaluation (vault)          evaluation data keyed by task + content hash
  6. swap_staged_task                  ONE statement: old version out, staged copy in
                                       (the calls its repairs sent stay in the call log)
  7. prune_evaluations (vault)         evaluation records of other versions
A crash before 6 leaves the old version (or no task) exactly as it was, plus garbage the next
run clears; a crash after 6 leaves the new version, whose evaluation was written in 5.
Re-ingesting an identical case is a no-op: the content hash matches and nothing is written.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from provrepair.provenance.agent_records import link_case
from provrepair.provenance.checkpoints import checkpoint
from provrepair.provenance.digest import CaseDigest, content_hash_of
from provrepair.provenance.edges import Edge, derive_edges
from provrepair.provenance.errors import InternalError, StoreUnavailable, TaskConflict
from provrepair.provenance.gc_pause import gc_paused
from provrepair.provenance.keys import LIVE_PREFIX, eval_key, staging_key, task_key
from provrepair.provenance.lock import new_owner_id, task_lock
from provrepair.provenance.models import Case
from provrepair.provenance.progress import NO_PROGRESS, Progress
from provrepair.provenance.readback import get_task_props
from provrepair.provenance.rows import (
    dumps,
    group_node_rows,
    input_row_json,
    memory_row_json,
    staged_edge_query,
    staged_node_query,
    step_row_json,
    task_props,
)
from provrepair.provenance.state.calls import kept_call_params
from provrepair.provenance.store.base import BATCH_ROWS, GraphStore, Statement, batched
from provrepair.provenance.vocab import SUFFICIENCY_EDGES


@dataclass(frozen=True)
class IngestResult:
    task_id: str
    status: str  # "created" | "replaced" | "unchanged"
    nodes: int
    edges: int


def content_hash(case: Case, dumped: dict[str, Any] | None = None) -> str:
    """The case's identity: sha256 of its canonical JSON (provenance/digest.py; `dumped`: the
    case's `model_dump(mode="json")` when the caller already has it)."""
    return content_hash_of(dumped if dumped is not None else case.model_dump(mode="json"))


def node_rows(key: str, dumped: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node row of a dumped case under `key`, in case order, one at a time."""
    for i, r in enumerate(dumped["session"]):
        yield input_row_json(key, r, i)
    for i, r in enumerate(dumped["memory_store"]):
        yield memory_row_json(key, r, i)
    for i, r in enumerate(dumped["trace"]):
        yield step_row_json(key, r, i)


def node_statements(key: str, case: Case) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(query name, rows) batches for every node of the case under `key` (MERGE queries)."""
    for name, group in group_node_rows(node_rows(key, case.model_dump(mode="json"))).items():
        for batch in batched(group):
            yield name, batch


def staged_statements(key: str, case: Case, edges: list[Edge], dumped: dict[str, Any] | None = None
                      ) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(query name, rows) batches writing the case into a cleared staging copy under `key`:
    every node, then every edge, grouped by their CREATE query. Streamed: a batch goes as
    soon as its group holds BATCH_ROWS rows, so the server writes it while the next rows are
    built (run_each); building every row first kept the server idle for 2.3 s of a
    1M-element ingest (BENCHMARKS.md, "Ingest")."""
    data = dumped if dumped is not None else case.model_dump(mode="json")
    uid_of: dict[str, str] = {}  # each id encoded once
    nodes: dict[str, list[dict[str, Any]]] = {}
    for row in node_rows(key, data):
        uid_of[row["props"]["id"]] = row["uid"]
        yield from _full_batch(nodes, staged_node_query(row["props"]), row)
    yield from _rest(nodes)
    links: dict[str, list[dict[str, Any]]] = {}
    for edge in edges:
        # Only what the CREATE reads: the type is in the query text, `sufficient` only on
        # the types that carry it (SUFFICIENCY_EDGES).
        link: dict[str, Any] = {"src": uid_of[edge.src], "dst": uid_of[edge.dst]}
        if edge.label in SUFFICIENCY_EDGES:
            link["sufficient"] = edge.sufficient
        yield from _full_batch(links, staged_edge_query(edge.label), link)
    yield from _rest(links)


def _full_batch(groups: dict[str, list[dict[str, Any]]], name: str, row: dict[str, Any]
                ) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Add `row` to its group; the group's batch when it is full."""
    group = groups.setdefault(name, [])
    group.append(row)
    if len(group) >= BATCH_ROWS:
        yield name, group
        groups[name] = []


def _rest(groups: dict[str, list[dict[str, Any]]]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The groups' last, partial batches."""
    for name, group in groups.items():
        if group:
            yield name, group


def evaluation_props(case: Case) -> dict[str, Any]:
    faults = {m.memory_id: m.fault_type.value for m in case.memory_store if m.fault_type}
    evaluation = case.evaluation.model_dump(mode="json") if case.evaluation else None
    return {"evaluation_json": dumps(evaluation), "fault_types_json": dumps(faults)}


def ingest_cases(store: GraphStore, cases: list[Case], *, replace: bool = False,
                 progress: Progress = NO_PROGRESS) -> list[IngestResult]:
    """Store several cases; every conflict is found before anything is written.
    `progress` counts nodes + edges written."""
    for case in cases:
        _stored_state(store, case, replace)
    edges = [derive_edges(case) for case in cases]
    progress.start("ingesting", sum(_nodes(c) + len(e) for c, e in zip(cases, edges, strict=True)))
    results = [ingest_case(store, case, replace=replace, progress=progress, edges=e)
               for case, e in zip(cases, edges, strict=True)]
    progress.finish()
    return results


def _nodes(case: Case) -> int:
    return len(case.session) + len(case.memory_store) + len(case.trace)


def _stored_state(store: GraphStore, case: Case, replace: bool) -> str:
    """"new", "unchanged" or "replace"; TaskConflict when a different version is stored."""
    existing = store.run("get_task", {"task_key": task_key(case.task_id)})
    if not existing:
        return "new"
    if replace:
        return "replace"
    if existing[0]["props"].get("content_hash") == content_hash(case):
        return "unchanged"
    raise TaskConflict(f"task {case.task_id!r} is already stored with other content; "
                       "use --replace to swap it for this version")


def ingest_case(store: GraphStore, case: Case, *, replace: bool = False,
                progress: Progress = NO_PROGRESS, edges: list[Edge] | None = None) -> IngestResult:
    """Store one validated case (its `edges` derived here unless given); see the module
    docstring for the crash argument."""
    edges = edges if edges is not None else derive_edges(case)
    sizes = (_nodes(case), len(edges))
    if _stored_state(store, case, replace) == "unchanged":
        return IngestResult(case.task_id, "unchanged", *sizes)
    store.prepare_for_writes()
    checkpoint("ingest_before_lock")
    with task_lock(store, case.task_id, new_owner_id("ingest"), "ingest"):
        checkpoint("ingest_after_lock")
        state = _stored_state(store, case, replace)  # again: another writer may have won
        if state == "unchanged":
            return IngestResult(case.task_id, "unchanged", *sizes)
        with gc_paused():  # rows for every element: the cyclic GC only slows this down
            _write_version(store, case, edges, progress)
    return IngestResult(case.task_id, "replaced" if state == "replace" else "created", *sizes)


def replace_locked(store: GraphStore, case: Case) -> None:
    """Write `case` over its stored version, the caller holding the task lock (live capture
    decides under it whether replacing is allowed: loaders/otel_runs.py)."""
    store.prepare_for_writes()
    with gc_paused():
        _write_version(store, case, derive_edges(case), NO_PROGRESS)


def _write_version(store: GraphStore, case: Case, edges: list[Edge], progress: Progress) -> None:
    """Steps 1-7 of the module docstring; the caller holds the task lock."""
    dumped = case.model_dump(mode="json")  # one pydantic call: the hash and every row
    live = task_key(case.task_id)
    staged = staging_key(case.task_id)
    store.run("delete_task", {"task_key": staged, **kept_call_params()})
    store.run("merge_task", {"task_key": staged,
                             "props": task_props(case, None, complete=False)})
    # Lazily built: the store can encode a batch, and hash a share of the case, while the
    # server writes the one before; the staged record gets its hash once all is written.
    digest = CaseDigest(dumped)
    store.run_each(_hashing(((name, {"rows": rows}) for name, rows
                             in staged_statements(staged, case, edges, dumped)),
                            digest, _nodes(case) + len(edges)),
                   lambda params: progress.advance(len(params["rows"])))
    content = digest.hexdigest()
    store.run("merge_task", {"task_key": staged, "props": {"content_hash": content}})
    _check_staged(store, case, staged, _nodes(case), len(edges))
    link_case(store, staged, case)
    keep = eval_key(case.task_id, content)
    store.run("merge_evaluation", {"eval_key": keep, "task_key": live,
                                   "props": evaluation_props(case)})
    checkpoint("ingest_before_swap")
    swapped = store.run("swap_staged_task", {"task_key": live, "staging_key": staged,
                                             **kept_call_params()})
    if not swapped or swapped[0]["swapped"] != 1:
        raise InternalError(f"task {case.task_id!r}: the staged copy vanished before the swap")
    store.run("prune_evaluations", {"task_key": live, "keep_key": keep})


def _hashing(statements: Iterator[Statement], digest: CaseDigest, rows: int
             ) -> Iterator[Statement]:
    """The statements, with an even share of the digest's pieces fed after each."""
    share = -(-digest.pieces * BATCH_ROWS // max(1, rows))  # ceil: pieces per full batch
    for statement in statements:
        yield statement
        digest.advance(share)


def _check_staged(store: GraphStore, case: Case, staged: str, nodes: int, edges: int) -> None:
    """Step 4: refuse to swap in a staged copy that is not exactly the case."""
    found = store.run("count_staged_elements", {"staging_key": staged})[0]
    got = (int(found["nodes"]), int(found["edges"]))
    if got != (nodes, edges):
        raise StoreUnavailable(
            f"task {case.task_id!r}: the staged copy holds {got[0]} nodes and {got[1]} edges "
            f"where the case has {nodes} and {edges} (a write batch was lost or sent twice "
            "on a broken connection); nothing was swapped in, run the ingest again")


def delete_task(store: GraphStore, task_id: str) -> int:
    """Remove a stored task: its evaluation records, a leftover staged copy, then the task
    with its nodes and runs in one statement (of the log of the calls its repairs issued,
    those that may have acted stay: a task ingested again under the id never sends them
    again; provenance/state/calls.py kept_call_params). Under the task lock; returns
    the nodes removed. A crash in between leaves the task readable (only its evaluation gone) and re-running
    finishes the job."""
    get_task_props(store, task_id)  # TaskNotFound, naming the task
    with task_lock(store, task_id, new_owner_id("delete"), "delete"):
        store.run("prune_evaluations", {"task_key": task_key(task_id), "keep_key": ""})
        store.run("delete_task", {"task_key": staging_key(task_id), **kept_call_params()})
        rows = store.run("delete_task", {"task_key": task_key(task_id), **kept_call_params()})
    return int(rows[0]["nodes"]) if rows else 0


def list_tasks(store: GraphStore) -> list[dict[str, Any]]:
    return store.run("list_tasks", {"live_prefix": LIVE_PREFIX})
