"""Many plans at once, their reads merged: one statement per query per round, not per plan.

The namespace plan (repair/plan/namespace.py) runs our planner (rules 1-8) once per reached
conversation. Run one after another, each plan waits for about a dozen round trips of its own
(the task record, the seeds, one statement per reach hop and its support check, the task's
lists): a hundred conversations cost a hundred times that, and on a loaded machine each round
trip waits for the server to be scheduled (BENCHMARKS.md, "A fault across a shared memory").

Here each plan runs, unchanged, in a thread of its own against a `GraphStore` that hands its
statements to one `Lockstep`, in the manner of a GraphQL DataLoader: a statement is queued
when sent; when every plan in flight is waiting for a reply, the queue is flushed: the
statements of one query that differ only in their `$uids` become one statement over the
union of the uids (the planner's node and edge queries are all anchored on `UNWIND $uids`,
and a uid names its task), those of a task-wide query one statement of its many-task form
(cypher/namespace/get_tasks.cypher, find_tasks_final_answers, list_tasks_steps: `UNWIND
$task_keys`), all pipelined on one connection (`store.read_ahead()`); each plan gets back
exactly the rows its own statement would have returned (split by the uid or task key each
row or edge answers, in the order the server gave them; `MERGES`). So a round of N plans
costs about the round trips of one plan, each plan's result is the one it computes alone
(the same code on the same rows: the property test compares them), and only one thread at
a time talks to the store. Only reads go through it: a plan writes nothing.
"""

from __future__ import annotations

import _thread
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, TypeVar

from provrepair.provenance.errors import InternalError, ProvrepairError
from provrepair.provenance.store.base import (
    BATCH_ROWS,
    GraphStore,
    Pending,
    ReadAhead,
    Row,
    batched,
)
from provrepair.provenance.store.queries import Query

T = TypeVar("T")


@dataclass(frozen=True)
class Merge:
    """How the statements of one query from many plans become one: `into` run with the
    union of their `param` values as `merged` (a list of uids stays `uids`; one task key per
    statement becomes `task_keys`); each row, or each edge of an edge query's one row of
    parallel lists (`edges`: repair/plan/graph.py), says by its `column` which plan's it is."""

    into: str
    param: str
    merged: str
    column: str
    edges: bool = False


# The queries a plan sends, by name (the others are sent as they are).
MERGES = {
    "get_nodes": Merge("get_nodes", "uids", "uids", "uid"),
    "resolve_seeds": Merge("resolve_seeds", "uids", "uids", "fault_uid"),
    "list_out_edges": Merge("list_out_edges", "uids", "uids", "anchors", edges=True),
    "list_support_inputs": Merge("list_support_inputs", "uids", "uids", "anchors", edges=True),
    "list_in_edges": Merge("list_in_edges", "uids", "uids", "anchors", edges=True),
    "get_task": Merge("get_tasks", "task_key", "task_keys", "task_key"),
    "find_final_answers": Merge("find_tasks_final_answers", "task_key", "task_keys",
                                "task_key"),
    "list_task_steps": Merge("list_tasks_steps", "task_key", "task_keys", "task_key"),
}
# Plans in flight at once: enough for every conversation of a large round, few enough that
# the threads stay cheap (beyond it, a finished plan's thread takes the next).
MAX_THREADS = 256


@dataclass(eq=False)  # one per statement sent: compared and hashed by identity
class _Request:
    name: str
    params: Mapping[str, Any]
    rows: list[Row] | None = None
    error: BaseException | None = None

    @property
    def done(self) -> bool:
        return self.rows is not None or self.error is not None


@dataclass
class _Statement:
    """One statement sent in a flush: its query, parameters, how it was merged (None: sent
    as it was) and the requests each merged value came from."""

    name: str
    params: dict[str, Any]
    merge: Merge | None
    owners: dict[Any, list[_Request]]

    def owners_of(self) -> list[_Request]:
        return list(dict.fromkeys(r for rs in self.owners.values() for r in rs))

    def split(self, rows: list[Row]) -> list[tuple[_Request, list[Row]]]:
        """Each request's part of the rows, in the order the server gave them."""
        requests = self.owners_of()
        if self.merge is None:
            return [(r, rows) for r in requests]
        if self.merge.edges:
            return _split_edges(rows, self.owners, requests)
        mine: dict[_Request, list[Row]] = {r: [] for r in requests}
        for row in rows:
            for request in self.owners.get(row[self.merge.column], ()):
                mine[request].append(row)
        return [(r, mine[r]) for r in requests]


def _split_edges(rows: list[Row], owners: dict[Any, list[_Request]],
                 requests: list[_Request]) -> list[tuple[_Request, list[Row]]]:
    """An edge query's rows (one per statement: an entry per edge in `anchors` and the other
    edge columns, one per far node in the `far_*` columns) split by anchor: each request
    gets the edges of its anchors, in the order given, and their far nodes."""
    parts: dict[_Request, list[Row]] = {r: [] for r in requests}
    for row in rows:
        edges: dict[_Request, list[int]] = {r: [] for r in requests}
        for at, anchor in enumerate(row["anchors"]):
            for request in owners.get(anchor, ()):
                edges[request].append(at)
        far_at = {uid: at for at, uid in enumerate(row["far_uid"])}
        for request in requests:
            keep = edges[request]
            far = sorted({far_at[row["uids"][i]] for i in keep})
            parts[request].append({c: [row[c][i] for i in (far if c.startswith("far_")
                                                             else keep)] for c in row})
    return [(r, parts[r]) for r in requests]


class Lockstep:
    """Runs jobs (functions of a store) in threads whose reads are merged round by round."""

    def __init__(self, store: GraphStore):
        self.store = store
        self._cond = threading.Condition()
        self._queue: list[_Request] = []
        self._active = 0    # jobs' threads still working (running, or waiting for a reply)
        self._waiting = 0   # of them, those waiting for a reply not flushed yet
        self.flushes = 0    # rounds flushed (for the benchmark)
        self.statements = 0  # statements sent (for the benchmark)

    def run_all(self, jobs: Sequence[Callable[[GraphStore], T]]) -> list[T]:
        """Each job's result, in order; the first job (in order) that raised re-raises. One
        job runs in the caller's thread, on the store itself (nothing to merge)."""
        if len(jobs) == 1:
            return [jobs[0](self.store)]
        results: list[Any] = [None] * len(jobs)
        errors: list[BaseException | None] = [None] * len(jobs)
        proxy = _LockstepStore(self)
        todo = iter(range(len(jobs)))
        lock = threading.Lock()

        def worker() -> None:
            try:
                while True:
                    with lock:
                        index = next(todo, None)
                    if index is None:
                        return
                    try:
                        results[index] = jobs[index](proxy)
                    except BaseException as exc:  # handed to the caller's thread
                        errors[index] = exc
            finally:
                self._leave()

        threads = min(len(jobs), MAX_THREADS)
        with self._cond:
            self._active += threads  # before any starts: none flushes a partial round
        for _ in range(threads):
            # Not threading.Thread: its start() waits for the new thread to run, two
            # context switches each, 5-45 ms for a hundred on this 2-core machine.
            _thread.start_new_thread(worker, ())
        with self._cond:
            self._cond.wait_for(lambda: self._active == 0)
        for error in errors:
            if error is not None:
                raise error
        return results

    def send(self, name: str, params: Mapping[str, Any]) -> Pending:
        query = self.store._checked(name, params)  # our own bug (a wrong call): raised here
        if query.mode != "read":
            raise InternalError(f"{query.path}: a write sent through the lockstep of plans")
        request = _Request(name, params)
        with self._cond:
            self._queue.append(request)
        return lambda: self._wait(request)

    def _wait(self, request: _Request) -> list[Row]:
        with self._cond:
            if not request.done:
                self._waiting += 1  # until a flush answers it (a flush answers every wait)
            while not request.done:
                if self._waiting == self._active:
                    self._flush()
                else:
                    self._cond.wait()
        if request.error is not None:
            raise request.error
        assert request.rows is not None
        return request.rows

    def _leave(self) -> None:
        with self._cond:
            self._active -= 1
            if self._waiting == self._active:
                # the others wait for each other (one of them flushes), or all are done
                self._cond.notify_all()

    def _flush(self) -> None:
        """Send every queued statement, merged; file the replies; wake the waiting plans.
        Runs with the lock held, while every other plan in flight waits. A failure that is
        no statement's own (the connection, a bug) is every queued request's."""
        queue, self._queue = self._queue, []
        self._waiting = 0  # every waiting plan's request is queued: answered below
        try:
            self._answer(queue)
        except BaseException as exc:
            for request in queue:
                if not request.done:
                    request.error = exc
        self._cond.notify_all()

    def _answer(self, queue: list[_Request]) -> None:
        statements = list(_merged(queue))
        self.flushes += 1
        self.statements += len(statements)
        parts: dict[_Request, list[list[Row]]] = {r: [] for r in queue}  # rows per statement
        with self.store.read_ahead() as reads:
            sent = [(s, reads.send(s.name, s.params)) for s in statements]
            for statement, pending in sent:
                try:
                    rows = pending()
                except ProvrepairError as exc:
                    for request in statement.owners_of():
                        request.error = exc
                    continue
                for request, mine in statement.split(rows):
                    parts[request].append(mine)
        for request in queue:
            if request.error is None:
                request.rows = _joined(request, parts[request])


def _merged(queue: list[_Request]) -> Iterator[_Statement]:
    """The statements answering the queued requests: those of a query in MERGES with the
    same other parameters as one (per batch of values), the others each as sent."""
    groups: dict[tuple[str, str], list[_Request]] = {}
    for request in queue:
        merge = MERGES.get(request.name)
        if merge is None:
            yield _Statement(request.name, dict(request.params), None, {None: [request]})
            continue
        rest = {k: v for k, v in request.params.items() if k != merge.param}
        key = (request.name, json.dumps(rest, sort_keys=True, default=str))
        groups.setdefault(key, []).append(request)
    for (name, _), requests in groups.items():
        merge = MERGES[name]
        rest = {k: v for k, v in requests[0].params.items() if k != merge.param}
        owners: dict[Any, list[_Request]] = {}
        for request in requests:
            value = request.params[merge.param]
            for v in value if isinstance(value, list) else [value]:
                owners.setdefault(v, []).append(request)
        for values in batched(list(owners), BATCH_ROWS):
            yield _Statement(merge.into, {**rest, merge.merged: values}, merge,
                             {v: owners[v] for v in values})


def _joined(request: _Request, parts: list[list[Row]]) -> list[Row]:
    """A request's rows from its parts of the statements that answered it: an edge query's
    one row of parallel lists (if any statement answered), concatenated list by list."""
    rows = [row for part in parts for row in part]
    merge = MERGES.get(request.name)
    if merge is None or not merge.edges or len(rows) < 2:
        return rows
    return [{c: [x for row in rows for x in row[c]] for c in rows[0]}]


class _LockstepReads(ReadAhead):
    def __init__(self, store: _LockstepStore):
        super().__init__(store)
        self.lockstep = store.lockstep

    def send(self, name: str, params: Mapping[str, Any]) -> Pending:
        return self.lockstep.send(name, params)


class _LockstepStore(GraphStore):
    """What a job sees: a store whose every read goes through the lockstep (a plan only
    reads). Its queries are the real store's."""

    def __init__(self, lockstep: Lockstep):
        super().__init__(lockstep.store.registry)
        self.lockstep = lockstep
        self.engine = lockstep.store.engine

    def _execute(self, query: Query, params: Mapping[str, Any]) -> list[Row]:
        return self.lockstep.send(query.name, params)()

    def read_ahead(self) -> AbstractContextManager[ReadAhead]:
        return nullcontext(_LockstepReads(self))

    def ensure_schema(self) -> None:
        self.lockstep.store.ensure_schema()

    def describe(self) -> dict[str, Any]:
        return self.lockstep.store.describe()
