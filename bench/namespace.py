"""A fault across a shared memory (issue 37): the benchmark, the property at scale, the speed.

    .venv/bin/python bench/namespace.py bench [--sizes 5,10,20,50] [--seeds 1,2,3,4,5]
                                              [--out FILE.json]
    .venv/bin/python bench/namespace.py property [--examples 500]
    .venv/bin/python bench/namespace.py scale [--conversations 1000] [--readers 100]
                                              [--steps 100] [--reps 5]
    .venv/bin/python bench/namespace.py rounds [--sizes 5,10,20,50] [--seeds 1,2,3]

`bench`: user histories of N sessions over one memory (benchmark/namespace_cases.py
`user_history`), a record planted in one session, later sessions reading it or notes derived
from it; ours across the namespace against per-conversation repair, the value sweep alone and
a full store reset (benchmark/namespace_bench.py): recall and precision of the sessions
reported affected, the latest session's answer, benign records kept, contaminated records
fixed, replayed steps, seconds.

`property`: the namespace plan against the concatenated task planned by the in-memory
reference (tests/integration/test_namespace_property.py) on `--examples` random histories,
and the plan made in rounds against the plan made one conversation at a time.

`scale`: `--conversations` conversations of `--steps` steps (≥ 100k nodes at the defaults),
a planted record read by `--readers` of them: `plan_namespace` wall time (median of `--reps`,
after a warm-up) in rounds (the default, repair/plan/namespace.py "Rounds") and one
conversation at a time (`speculate=False`, what it was before; the two alternate, so they
share the machine's load), and the same region planned inside ONE task (the reached
conversations concatenated: benchmark/namespace_cases.py `concatenate`), with the ratios.

`rounds`: where the first round's guesses miss (notes derived from the planted record, read
by later sessions: benchmark/namespace_cases.py `user_history`), the rounds and plans made
and the time, in rounds and one conversation at a time (the same plan, checked).

Everything runs against a throwaway PROVREPAIR_HOME with its own embedded server.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

from provrepair.benchmark.namespace_bench import METHODS, as_dicts, histories, score, summary, table
from provrepair.benchmark.namespace_cases import (
    History,
    concatenate,
    conversation_times,
    random_history,
    user_history,
    wide_history,
    written_by,
)
from provrepair.benchmark.random_cases import RandomChooser
from provrepair.benchmark.reference import plan_in_memory
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.config import open_store
from provrepair.repair.plan import compute_plan
from provrepair.repair.plan.namespace import plan_namespace


def bench(args: argparse.Namespace) -> None:
    sizes = [int(s) for s in args.sizes.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    scores = []
    with open_store(migrate=True) as store:
        for sessions, seed, fault_session in histories(sizes, seeds):
            for method in METHODS:
                scores.append(score(store, sessions, seed, fault_session, method))
    rows = summary(scores)
    print(table(rows))
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows, "scores": as_dicts(scores)},
                                             indent=1))


def property_run(args: argparse.Namespace) -> None:
    verdicts: Counter[str] = Counter()
    shapes: Counter[str] = Counter()
    with open_store(migrate=True) as store:
        for seed in range(args.examples):
            namespace = f"p{seed}-{uuid.uuid4().hex[:6]}"
            history = random_history(RandomChooser(seed), 2 + seed % 4, namespace=namespace,
                                     prefix=namespace)
            for case in history.cases:
                ingest_case(store, case)
            verdicts[_agrees(store, history, namespace)] += 1
            shapes.update(_shapes(history) | ({"collided"} if history.collided else set()))
    print(f"namespace plan vs concatenated task, {args.examples} random histories: "
          f"{verdicts['equal']} equal, {verdicts['more']} more (a copy whose version cannot "
          f"be told: unknown or shared text), {verdicts['missed']} missed, "
          f"{verdicts['rounds']} rounds differing")
    print(f"histories with a stale snapshot: {shapes['stale']}; with a conversation that "
          f"started before one it read from: {shapes['early']}; with a recording rendering "
          f"what it read its own way: {shapes['rendered']}; with versions sharing a text: "
          f"{shapes['collided']}")


def _shapes(history: History) -> set[str]:
    """'stale': a conversation holds only an earlier version of a record than the latest
    written before it; 'early': one started before a conversation whose version it holds;
    'rendered': one's recording renders what it read unlike the writer did."""
    found: set[str] = set()
    latest: dict[str, str] = {}   # agent id → the latest version written so far
    started: dict[str, tuple[int, str]] = {}  # version → its writer's start
    for case in history.cases:    # in the order they ran
        start = (conversation_times(case)[0], case.task_id)
        written = written_by(case)
        held = {m.memory_id for m in case.memory_store}
        for m in case.memory_store:
            agent = m.record_id or m.memory_id
            if m.memory_id in written:
                continue
            if m.content.startswith("read "):
                found.add("rendered")
            if latest.get(agent, m.memory_id) not in held:
                found.add("stale")
            if started.get(m.memory_id, start) > start:
                found.add("early")
        for m in case.memory_store:
            if m.memory_id in written:
                latest[m.record_id or m.memory_id] = m.memory_id
                started[m.memory_id] = start
    return found


def _agrees(store: GraphStore, history: History, namespace: str) -> str:
    """'equal' to the reference; 'more' (a superset, allowed where a copy's version cannot
    be told: `History.unknown_copies`, `History.collided`); else 'missed' or 'rounds' (the
    plan in rounds is not the plan made in turn)."""
    plan, _ = plan_namespace(store, namespace, history.faults)
    if plan_namespace(store, namespace, history.faults, speculate=False)[0] != plan:
        return "rounds"
    joined = concatenate(history)
    reference = plan_in_memory(joined.case)
    want = {pair for i in reference["affected_ids"] for pair in joined.origin[i]}
    got = {(c.task_id, i) for c in plan.conversations for i in c.plan.affected_ids}
    inv = {pair for i in reference["invalidate_claim_ids"] for pair in joined.origin[i]}
    got_inv = {(c.task_id, i) for c in plan.conversations for i in c.plan.invalidate_claim_ids}
    if want == got and inv == got_inv:
        return "equal"
    if (history.unknown_copies() or history.collided) and want <= got and inv <= got_inv:
        return "more"
    return "missed"


def scale(args: argparse.Namespace) -> None:
    history = wide_history(args.conversations, args.readers, args.steps, namespace="scale",
                           prefix="scale")
    nodes = sum(len(c.session) + len(c.memory_store) + len(c.trace) for c in history.cases)
    with open_store(migrate=True) as store:
        start = time.perf_counter()
        for case in history.cases:
            ingest_case(store, case)
        ingested = time.perf_counter() - start
        plan, _ = plan_namespace(store, "scale", history.faults)  # warm-up
        # in rounds (the default) and one conversation at a time, alternating: the same load
        times: dict[bool, list[float]] = {True: [], False: []}
        traces = {}
        for _ in range(args.reps):
            for speculate in (True, False):
                start = time.perf_counter()
                got, traces[speculate] = plan_namespace(store, "scale", history.faults,
                                                        speculate=speculate)
                times[speculate].append(time.perf_counter() - start)
                assert got == plan  # the same plan either way
        reached = {c.task_id for c in plan.conversations}
        region = History([c for c in history.cases if c.task_id in reached], history.faults)
        one = concatenate(region, task_id="scale-one-task").case
        ingest_case(store, one)
        compute_plan(store, one.task_id)  # warm-up
        single = []
        for _ in range(args.reps):
            start = time.perf_counter()
            one_plan, _ = compute_plan(store, one.task_id)
            single.append(time.perf_counter() - start)
    affected = sum(len(c.plan.affected_ids) for c in plan.conversations)
    ns, seq, st = (statistics.median(times[True]), statistics.median(times[False]),
                   statistics.median(single))
    n = max(1, len(plan.conversations))
    print(f"namespace: {args.conversations} conversations, {nodes} nodes (ingest {ingested:.1f} s);"
          f" a fault read by {len(plan.conversations)} conversations, |A0| = {affected}")
    print(f"plan_namespace in rounds:      median {ns:.3f} s ({traces[True].rounds} rounds, "
          f"{traces[True].plans_made} plans, {ns / n * 1000:.1f} ms per conversation)")
    print(f"one conversation at a time:    median {seq:.3f} s ({traces[False].rounds} rounds, "
          f"{seq / n * 1000:.1f} ms per conversation); rounds are {seq / ns:.1f}x faster")
    print(f"one task, same region: median {st:.3f} s (|A0| = {len(one_plan.affected_ids)}); "
          f"ratio {ns / st:.1f}x in rounds, {seq / st:.1f}x one at a time")
    print("runs (s): rounds " + " ".join(f"{t:.3f}" for t in times[True]) + "; one at a time "
          + " ".join(f"{t:.3f}" for t in times[False]) + "; one task "
          + " ".join(f"{t:.3f}" for t in single))


def rounds(args: argparse.Namespace) -> None:
    """Rounds where the guesses miss: user histories (a planted record, notes derived from it
    read by later sessions), planned in rounds and one conversation at a time."""
    print("| sessions | seed | reached | rounds | plans made | in rounds (s) | one at a time (s) |")
    print("|---|---|---|---|---|---|---|")
    with open_store(migrate=True) as store:
        for sessions, seed, fault_session in histories(
                [int(s) for s in args.sizes.split(",")], [int(s) for s in args.seeds.split(",")]):
            namespace = f"rounds-{sessions}-{seed}"
            history = user_history(sessions, fault_session, seed=seed, namespace=namespace,
                                   prefix=namespace)
            for case in history.cases:
                ingest_case(store, case)
            start = time.perf_counter()
            plan, trace = plan_namespace(store, namespace, [history.fault])
            fast = time.perf_counter() - start
            start = time.perf_counter()
            alone, _ = plan_namespace(store, namespace, [history.fault], speculate=False)
            slow = time.perf_counter() - start
            assert plan == alone
            print(f"| {sessions} | {seed} | {len(plan.conversations)} | {trace.rounds} | "
                  f"{trace.plans_made} | {fast:.3f} | {slow:.3f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    b = sub.add_parser("bench")
    b.add_argument("--sizes", default="5,10,20,50")
    b.add_argument("--seeds", default="1,2,3,4,5")
    b.add_argument("--out")
    p = sub.add_parser("property")
    p.add_argument("--examples", type=int, default=500)
    s = sub.add_parser("scale")
    s.add_argument("--conversations", type=int, default=1000)
    s.add_argument("--readers", type=int, default=100)
    s.add_argument("--steps", type=int, default=100)
    s.add_argument("--reps", type=int, default=5)
    r = sub.add_parser("rounds")
    r.add_argument("--sizes", default="5,10,20,50")
    r.add_argument("--seeds", default="1,2,3")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="provrepair-namespace-bench-") as home:
        os.environ["PROVREPAIR_HOME"] = home
        os.environ.pop("PROVREPAIR_URI", None)
        {"bench": bench, "property": property_run, "scale": scale,
         "rounds": rounds}[args.what](args)
        from provrepair.provenance.store.embedded import EmbeddedServer

        EmbeddedServer(Path(home)).stop()
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
