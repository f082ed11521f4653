"""`bench run|sweep --jobs N`: the pairs of one method run in N worker processes.

A pair (case × method) is independent of every other pair of its method: it ingests its own
task copy `<case>::<method>` and repairs only that (benchmark/pair.py). So the pairs of one
method are handed to a process pool, and the results are taken back **in the order they were
handed out**: results.jsonl gets the very lines of a serial run in the very order, and the
tables, summary and plots are the same bytes whatever N and whichever worker finished first
(only each line's own `seconds` is a measurement). Methods stay one after the other, so two
pairs that share a task id (the same case and method at another replay-noise rate of a
sweep, in the same graph) never run at once, and the progress bar is still one per method.

Each worker opens its own connection to the configured store, in the run's graph (the
embedded server is shared: FalkorDB serves many connections, and the tasks differ), reads the
cases once per directory and keeps both for its life. The run's lock (run.RUN_LOCK) is held by
the parent for the whole run, so `bench clean` keeps the graph while any worker uses it.

`--jobs 1` runs every pair in the parent, as before this module existed.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from provrepair.benchmark.cases import BenchCase, load_cases
from provrepair.benchmark.noise import NoisyReasoner
from provrepair.benchmark.pair import run_pair
from provrepair.benchmark.store import bench_store
from provrepair.provenance.errors import InputError
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.reasoners import make_reasoner
from provrepair.repair.reasoners.base import Reasoner

# A worker is told pairs this far ahead of the one whose line is written next: enough to keep
# every worker busy, few enough that a killed run loses only a handful of finished pairs.
AHEAD_PER_JOB = 4
PARENT_CHECK_S = 1.0  # how often a worker looks whether its parent is still there


def default_jobs() -> int:
    """One worker per CPU (BENCHMARKS-archive.md, "bench sweep --jobs")."""
    return os.cpu_count() or 1


def check_jobs(jobs: int) -> int:
    if jobs < 1:
        raise InputError(f"--jobs {jobs}: must be at least 1")
    return jobs


@dataclass(frozen=True)
class Brain:
    """How to make the run's reasoner again in a worker (a reasoner need not pickle)."""

    reasoner: str
    model: str | None
    replay_noise: float
    noise_seed: int

    def make(self) -> Reasoner:
        brain: Reasoner = make_reasoner(self.reasoner, self.model)
        return NoisyReasoner(brain, self.replay_noise, self.noise_seed) if self.replay_noise else brain


@dataclass(frozen=True)
class Job:
    """One pair, as a worker needs it: the case by directory, task id and content hash."""

    cases_dir: Path
    graph: str
    case: str
    digest: str
    method: str
    brain: Brain


@dataclass(frozen=True)
class Pool:
    executor: Executor
    jobs: int

    def lines(self, jobs: list[Job]) -> Iterator[dict[str, Any]]:
        """The line of each job, in the order of `jobs`, with at most AHEAD_PER_JOB per
        worker handed out ahead of the one yielded next."""
        pending: deque[Future[dict[str, Any]]] = deque()
        try:
            for job in jobs:
                pending.append(self.executor.submit(run_job, job))
                if len(pending) >= self.jobs * AHEAD_PER_JOB:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:  # stopped early (an error, Ctrl-C): start nothing more
                future.cancel()


@contextmanager
def worker_pool(jobs: int) -> Iterator[Pool | None]:
    """N worker processes for the block (None for one job: the parent runs the pairs).
    Spawned, not forked: the parent holds store connections and a progress bar."""
    if check_jobs(jobs) == 1:
        yield None
        return
    executor = ProcessPoolExecutor(max_workers=jobs,
                                   mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start_worker, initargs=(os.getpid(),))
    try:
        yield Pool(executor, jobs)
    except BaseException:
        executor.shutdown(wait=True, cancel_futures=True)
        raise
    executor.shutdown(wait=True)


# -- in the worker process -------------------------------------------------------------------

_OPEN = ExitStack()
_STORES: dict[str, GraphStore] = {}
_CASES: dict[Path, dict[str, BenchCase]] = {}
_BRAINS: dict[Brain, Reasoner] = {}


def _start_worker(parent: int) -> None:
    """Ctrl-C reaches the whole process group: the parent stops the pool (a rerun resumes),
    so a worker ignores it rather than print its own traceback. A worker whose parent died
    (killed, even with -9) exits instead of waiting for work forever."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()


def _exit_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(1)


def run_job(job: Job) -> dict[str, Any]:
    if job.brain not in _BRAINS:
        _BRAINS[job.brain] = job.brain.make()
    return run_pair(_store(job.graph), _case(job), job.method, _BRAINS[job.brain])


def _store(graph: str) -> GraphStore:
    """The worker's own connection to the run's graph, opened once, closed at its exit."""
    if not _STORES:
        atexit.register(_OPEN.close)
    if graph not in _STORES:
        _STORES[graph] = _OPEN.enter_context(bench_store(graph))
    return _STORES[graph]


def _case(job: Job) -> BenchCase:
    cases = _CASES.get(job.cases_dir, {})
    item = cases.get(job.case)
    if item is None or item.digest != job.digest:  # new directory, or its files changed
        items, _ = load_cases(job.cases_dir)
        _CASES[job.cases_dir] = cases = {c.task_id: c for c in items}
        item = cases.get(job.case)
    if item is None or item.digest != job.digest:
        raise InputError(f"{job.cases_dir}: case {job.case!r} changed while the run was going; "
                         "run again")
    return item
