"""Reliability harness (not part of `make test`): races and kill -9 trials at scale, through
the real console script against a private embedded store.

    python bench/reliability.py [--trials 20] [--steps 1500] [--only NAME]
    python bench/reliability.py --only soak [--soak-nodes 200000] [--soak-cycles 10]

Trials (each prints trials / correct):
  replace-vs-replace  two `ingest --replace` of different versions of one large task start
                      together; correct: each exits 0 or is refused (TaskConflict, exit 2),
                      at least one wins, the stored task is complete and is exactly one of the
                      two versions, no staging copy is left
  repair-vs-replace   `repair` and `ingest --replace` start together; correct: no pending
                      node, the stored version complete, at most one repair of it, and its
                      fault deleted exactly when it was repaired
  follow-resume       `ingest --follow` of an event stream is killed (-9) at a random moment
                      and the same stream replayed; correct: the graph equals an
                      uninterrupted recording, node for node and edge for edge
  server-kill         the store's server is killed (-9) while cases are being ingested one
                      by one; correct: after a restart every acknowledged (exit 0) ingest is
                      there, complete
  replace-16k         tasks fill a graph to just under 16,384 nodes, then an `ingest --replace`
                      whose staged copy crosses that capacity step (the FalkorDB 4.16 deletion
                      defect, docs/engines.md); correct: `db check` clean, every task listed and
                      equal to its source (content hash)
  restart-loading     the server is killed (-9) after a large ingest, then two `db start` and
                      a `tasks` start together while it loads; correct: all exit 0, exactly one
                      server on the data directory, the task listed
  follow-vs-writer    `ingest --follow` records a stream while `delete --task` and `ingest
                      --replace` of the same task run; correct: both refused (TaskConflict,
                      exit 2), the follow exits 0 and the task equals an undisturbed recording
And, only when asked for with `--only soak` (minutes at 200k nodes):
  soak                a private store filled to --soak-nodes nodes (one `ingest` of a .jsonl
                      of generated tasks), then --soak-cycles cycles, each: `ingest --replace`
                      of a changed version of one task, `delete --task` of another and its
                      re-ingest, `repair` of a third, then a restart (`db stop` + `db start`
                      on cycles 1, 3, ..., kill -9 of the server + `db start` on 2, 4, ...);
                      correct: every command succeeds, one server after each start, `db
                      check` clean, the tasks listed are exactly the sources, and every task
                      read back as recorded (what `show --original` prints) has its source's
                      content hash, as has the hash the store keeps
A repair is accepted in every finished status: repaired (exit 0), needs_human (3), partial (4).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from provrepair.benchmark.random_cases import random_case
from provrepair.provenance.ingest import content_hash
from provrepair.provenance.keys import task_key
from provrepair.provenance.models import Case
from provrepair.provenance.readback import read_case
from provrepair.provenance.state.runs import COMMITTED_REPAIR
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.config import connect
from provrepair.provenance.store.embedded import EmbeddedServer, servers_in

EXE = str(Path(sys.executable).with_name("provrepair"))


class Harness:
    def __init__(self, home: Path, steps: int, soak_nodes: int = 200_000, soak_cycles: int = 10):
        self.home, self.steps, self.trial = home, steps, 0
        self.soak_nodes, self.soak_cycles = soak_nodes, soak_cycles
        self.killed_mid_stream = 0  # follow-resume kills that landed before the stream's end
        self.server = EmbeddedServer(home)

    def env(self, graph: str) -> dict[str, str]:
        env = {**os.environ, "PROVREPAIR_HOME": str(self.home), "PROVREPAIR_GRAPH": graph}
        env.pop("PROVREPAIR_URI", None)
        return env

    def spawn(self, graph: str, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([EXE, *args], env=self.env(graph), text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def run(self, graph: str, *args: str,
            timeout: float | None = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run([EXE, *args], env=self.env(graph), text=True, capture_output=True,
                              timeout=timeout)

    @contextlib.contextmanager
    def connect(self, graph: str) -> Iterator[GraphStore]:
        """A client of the harness's own server (started if need be) on `graph`."""
        info, _ = self.server.start()
        os.environ["PROVREPAIR_PASSWORD"] = self.server.password()
        from provrepair.provenance.store.config import STORE_CREDENTIALS

        with connect(f"falkordb://{info.host}:{info.port}", STORE_CREDENTIALS,
                     graph=graph) as store:
            yield store

    def query(self, graph: str, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        with self.connect(graph) as store:
            rows: list[dict[str, Any]] = store.run(name, params)
            return rows

    def next_graph(self) -> str:
        self.trial += 1
        return f"rel_{self.trial}"

    def write_case(self, case: Case, name: str) -> Path:
        path = self.home / f"{name}.json"
        path.write_text(case.model_dump_json())
        return path


def versions(seed: int, steps: int) -> tuple[Case, Case]:
    one = random_case(seed, steps)
    raw = one.model_dump(mode="json")
    raw["session"][0]["content"] += " (version 2)"
    return one, Case.model_validate(raw)


FINISHED_EXITS = {0, 3, 4}  # repaired, needs_human, partial (commands/repair.py)


def ok_or_refused(done: tuple[int, str]) -> bool:
    code, err = done
    return code in FINISHED_EXITS or (code == 2 and err.startswith("TaskConflict: "))


def finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    _, err = proc.communicate(timeout=600)
    return proc.returncode, err


def task_row(h: Harness, graph: str, task_id: str) -> dict[str, Any] | None:
    done = h.run(graph, "tasks", "--json")
    return next((r for r in json.loads(done.stdout) if r["task_id"] == task_id), None)


def replace_vs_replace(h: Harness, seed: int) -> bool:
    graph = h.next_graph()
    one, two = versions(seed, h.steps)
    paths = [h.write_case(one, f"{graph}_a"), h.write_case(two, f"{graph}_b")]
    assert h.run(graph, "ingest", str(paths[0])).returncode == 0
    procs = [h.spawn(graph, "ingest", "--replace", str(p)) for p in reversed(paths)]
    results = [finish(p) for p in procs]
    stored = h.query(graph, "get_task", {"task_key": task_key(one.task_id)})
    staged = h.query(graph, "list_staged_tasks", {"staging_prefix": "!"})
    row = task_row(h, graph, one.task_id)
    return (all(ok_or_refused(r) for r in results) and any(r[0] == 0 for r in results)
            and bool(stored) and stored[0]["props"].get("complete") is True
            and stored[0]["props"].get("content_hash") in {content_hash(one), content_hash(two)}
            and row is not None and row["steps"] == len(one.trace) and not staged)


def repair_vs_replace(h: Harness, seed: int) -> bool:
    graph = h.next_graph()
    one, two = versions(seed, h.steps)
    paths = [h.write_case(one, f"{graph}_a"), h.write_case(two, f"{graph}_b")]
    assert h.run(graph, "ingest", str(paths[0])).returncode == 0
    procs = [h.spawn(graph, "repair", "--task", one.task_id),
             h.spawn(graph, "ingest", "--replace", str(paths[1]))]
    results = [finish(p) for p in procs]
    row = task_row(h, graph, one.task_id)
    runs = json.loads(h.run(graph, "history", "--task", one.task_id, "--json").stdout)
    repaired = [r for r in runs if r["status"] in COMMITTED_REPAIR]
    shown = json.loads(h.run(graph, "show", "--task", one.task_id, "--json").stdout)
    status = {m["memory_id"]: m["status"] for m in shown["memory_store"]}
    recorded = {m.memory_id: m.status.value for m in one.memory_store}  # same in both versions
    expected = {f: "deleted" if repaired else recorded[f] for f in one.diagnosed_faults}
    return (all(ok_or_refused(r) for r in results) and row is not None and row["complete"]
            and row["pending_nodes"] == 0 and len(repaired) <= 1
            and {f: status.get(f) for f in one.diagnosed_faults} == expected)


def event_stream(case: Case) -> str:
    events = [{"kind": "task", "task_id": case.task_id, "domain": case.domain,
               "tools": [t.model_dump(mode="json") for t in case.tools], "world": case.world}]
    timed = [(u.timestamp, 0, {"kind": "user_input", **u.model_dump(mode="json")})
             for u in case.session]
    timed += [(m.created_at, 2, {"kind": "memory", **m.model_dump(mode="json")})
              for m in case.memory_store]
    timed += [(s.timestamp, 1, {"kind": "step", **s.model_dump(mode="json")})
              for s in case.trace]
    events += [e for _, _, e in sorted(timed, key=lambda t: (t[0], t[1]))]
    events += [{"kind": "faults", "task_id": case.task_id,
                "diagnosed_faults": case.diagnosed_faults},
               {"kind": "end", "task_id": case.task_id}]
    return "".join(json.dumps(e) + "\n" for e in events)


def snapshot(h: Harness, graph: str, task_id: str) -> tuple[Any, ...]:
    key = {"task_key": task_key(task_id)}
    nodes = sorted(json.dumps(r["props"], sort_keys=True) for r in
                   h.query(graph, "list_task_nodes", key))
    edges = sorted((r["label"], r["src"], r["dst"], r["sufficient"]) for r in
                   h.query(graph, "list_task_edges", key))
    return nodes, edges


def follow_resume(h: Harness, seed: int) -> bool:
    graph, reference = h.next_graph(), h.next_graph()
    case = random_case(seed, h.steps // 2)
    stream = h.home / f"{graph}.jsonl"
    stream.write_text(event_stream(case))
    assert h.run(reference, "ingest", "--follow", str(stream)).returncode == 0
    proc = h.spawn(graph, "ingest", "--follow", str(stream))
    time.sleep(random.Random(seed).uniform(0.4, 1.2))  # fault injection at a random moment
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    before = task_row(h, graph, case.task_id)
    h.killed_mid_stream += before is None or not before["complete"]
    replay = h.run(graph, "ingest", "--follow", str(stream))
    row = task_row(h, graph, case.task_id)
    # a kill after the stream's end leaves a complete task, which a replay reports as such
    replayed = replay.returncode == 0 or "already stored and complete" in replay.stderr
    return (replayed and row is not None and row["complete"]
            and snapshot(h, graph, case.task_id) == snapshot(h, reference, case.task_id))


def server_kill(h: Harness, seed: int) -> bool:
    graph = h.next_graph()
    rng = random.Random(seed)
    cases = [random_case(seed * 100 + i, 60) for i in range(40)]
    acknowledged: list[str] = []
    info, _ = h.server.start()
    kill_after = rng.uniform(0.5, 4.0)
    started = time.monotonic()
    for i, case in enumerate(cases):
        raw = case.model_dump(mode="json")
        raw["task_id"] = f"{graph}_{i}"
        for section in ("session", "memory_store", "trace"):
            for record in raw[section]:
                record["task_id"] = raw["task_id"]
        path = h.write_case(Case.model_validate(raw), f"{graph}_{i}")
        if time.monotonic() - started > kill_after:
            os.kill(info.pid, signal.SIGKILL)
            break
        if h.run(graph, "ingest", str(path)).returncode == 0:
            acknowledged.append(raw["task_id"])
    h.server.start()  # restart on the same data
    stored = {r["task_id"]: r for r in json.loads(h.run(graph, "tasks", "--json").stdout)}
    return all(t in stored and stored[t]["complete"] for t in acknowledged)


def retasked(case: Case, task_id: str) -> Case:
    raw = case.model_dump(mode="json")
    raw["task_id"] = task_id
    for section in ("session", "memory_store", "trace"):
        for record in raw[section]:
            record["task_id"] = task_id
    return Case.model_validate(raw)


def case_nodes(case: Case) -> int:
    return len(case.session) + len(case.memory_store) + len(case.trace)


def stored_nodes(h: Harness, graph: str) -> int:
    rows = h.query(graph, "scan_labels", {})
    return sum(int(r["scanned"]) for r in rows
               if r["label"] in ("Node", "Task", "TaskLock", "RepairRun"))


def replace_16k(h: Harness, seed: int) -> bool:
    graph = h.next_graph()
    big_one, big_two = versions(seed, 2000)
    filler = random_case(seed + 1000, 1000)
    sources = {big_one.task_id: big_one}
    assert h.run(graph, "ingest", str(h.write_case(big_one, f"{graph}_big"))).returncode == 0
    i = 0
    while stored_nodes(h, graph) + case_nodes(filler) + 8 <= 2**14:
        case = retasked(filler, f"fill_{i}")
        assert h.run(graph, "ingest", str(h.write_case(case, f"{graph}_{i}"))).returncode == 0
        sources[case.task_id] = case
        i += 1
    crosses = stored_nodes(h, graph) + case_nodes(big_two) > 2**14
    replaced = h.run(graph, "ingest", "--replace", str(h.write_case(big_two, f"{graph}_big2")))
    sources[big_two.task_id] = big_two
    check = h.run(graph, "db", "check")
    listed = h.run(graph, "tasks", "--json")
    hashes = {t: (h.query(graph, "get_task", {"task_key": task_key(t)}) or [{"props": {}}])[0]
              ["props"].get("content_hash") for t in sources}
    return (crosses and replaced.returncode == 0 and check.returncode == 0
            and listed.returncode == 0
            and sorted(r["task_id"] for r in json.loads(listed.stdout)) == sorted(sources)
            and all(hashes[t] == content_hash(c) for t, c in sources.items()))


def restart_loading(h: Harness, seed: int) -> bool:
    graph = h.next_graph()
    case = random_case(seed, h.steps)
    assert h.run(graph, "ingest", str(h.write_case(case, graph))).returncode == 0
    info = h.server.running()
    assert info is not None
    time.sleep(1.2)  # appendfsync everysec: the log holds the ingest
    os.kill(info.pid, signal.SIGKILL)
    while Path(f"/proc/{info.pid}").exists():
        time.sleep(0.05)
    procs = [h.spawn(graph, "db", "start"), h.spawn(graph, "db", "start"),
             h.spawn(graph, "tasks", "--json")]
    results = [p.communicate(timeout=600) for p in procs]
    listed = json.loads(results[2][0]) if procs[2].returncode == 0 else []
    return (all(p.returncode == 0 for p in procs) and len(servers_in(h.home)) == 1
            and any(r["task_id"] == case.task_id for r in listed))


def follow_vs_writer(h: Harness, seed: int) -> bool:
    graph, reference = h.next_graph(), h.next_graph()
    case = random_case(seed, h.steps // 2)
    events = event_stream(case).splitlines(keepends=True)
    whole = h.home / f"{reference}.jsonl"
    whole.write_text("".join(events))
    assert h.run(reference, "ingest", "--follow", str(whole)).returncode == 0
    stream = h.home / f"{graph}.jsonl"
    half = len(events) // 2
    stream.write_text("".join(events[:half]))
    follow = h.spawn(graph, "ingest", "--follow", str(stream))
    deadline = time.monotonic() + 120
    while not h.query(graph, "get_task", {"task_key": task_key(case.task_id)}):
        assert time.monotonic() < deadline, "the follow never flushed"
        time.sleep(0.05)
    other = h.write_case(versions(seed, 40)[1], f"{graph}_other")
    other_raw = json.loads(other.read_text())
    other.write_text(json.dumps(retasked(Case.model_validate(other_raw), case.task_id)
                                .model_dump(mode="json")))
    writers = [h.spawn(graph, "delete", "--task", case.task_id),
               h.spawn(graph, "ingest", "--replace", str(other))]
    refused = [finish(w) for w in writers]
    with stream.open("a") as handle:
        handle.write("".join(events[half:]))
    followed = finish(follow)
    return (all(code == 2 and err.startswith("TaskConflict: ") for code, err in refused)
            and followed[0] == 0
            and snapshot(h, graph, case.task_id) == snapshot(h, reference, case.task_id))


def timed(label: str, h: Harness, graph: str, *args: str,
          exits: frozenset[int] = frozenset({0})) -> float:
    """Run one command, print how long it took; a refused exit code is an assertion."""
    started = time.monotonic()
    done = h.run(graph, *args, timeout=None)  # a 200k-node ingest takes many minutes
    took = time.monotonic() - started
    print(f"  {label:<34} {took:7.1f} s  exit {done.returncode}", flush=True)
    assert done.returncode in exits, f"{' '.join(args)}: exit {done.returncode}: {done.stderr[-300:]}"
    return took


def restart(h: Harness, graph: str, cycle: int) -> float:
    """`db stop` + `db start` on cycles 1, 3, ... (`cycle` counts from 0), kill -9 of the
    server + `db start` on 2, 4, ...; the time of the start (the log's replay) is returned."""
    if cycle % 2 == 0:
        timed("db stop", h, graph, "db", "stop")
    else:
        info = h.server.running()
        assert info is not None, "no server to kill"
        os.kill(info.pid, signal.SIGKILL)  # no wait for the log's fsync: a reply means written
        while Path(f"/proc/{info.pid}").exists():
            time.sleep(0.05)
        print(f"  {'kill -9 server':<34} {'':>7}    pid {info.pid}", flush=True)
    took = timed("db start", h, graph, "db", "start")
    assert len(servers_in(h.home)) == 1, "more than one server on the data directory"
    return took


def read_back(h: Harness, graph: str, sources: dict[str, Case]) -> list[str]:
    """The tasks whose stored version (as recorded, whatever repairs changed since) or whose
    kept hash differs from its source's content hash."""
    wrong = []
    with h.connect(graph) as store:
        for task_id, case in sources.items():
            kept = (store.run("get_task", {"task_key": task_key(task_id)}) or [{"props": {}}])[0]
            recorded = read_case(store, task_id, with_evaluation=True, as_recorded=True)
            if not content_hash(case) == content_hash(recorded) == kept["props"].get("content_hash"):
                wrong.append(task_id)
    return wrong


def soak(h: Harness, seed: int) -> bool:
    graph = h.next_graph()
    rng = random.Random(seed)
    sources: dict[str, Case] = {}
    while sum(case_nodes(c) + 1 for c in sources.values()) < h.soak_nodes:  # + its :Task
        i = len(sources)
        sources[f"soak_{i}"] = retasked(random_case(seed * 10_000 + i, 1000), f"soak_{i}")
    bulk = h.home / f"{graph}.jsonl"
    bulk.write_text("".join(c.model_dump_json() + "\n" for c in sources.values()))
    print(f"  {len(sources)} tasks, {sum(case_nodes(c) for c in sources.values())} case nodes",
          flush=True)
    # a new PROVREPAIR_GRAPH has no indexes until migrated (README): without them every edge's
    # MATCH is a label scan, and 25k nodes took 9 minutes
    timed("db migrate", h, graph, "db", "migrate")
    timed("ingest (one .jsonl)", h, graph, "ingest", "--json", str(bulk))
    nodes = stored_nodes(h, graph)
    print(f"  stored nodes {nodes}", flush=True)
    restarts: list[float] = []
    repaired: set[str] = set()
    for cycle in range(h.soak_cycles):
        print(f" cycle {cycle + 1}/{h.soak_cycles}", flush=True)
        replaced, deleted, repairing = rng.sample(
            sorted(t for t in sources if t not in repaired), 3)
        raw = sources[replaced].model_dump(mode="json")
        raw["session"][0]["content"] += f" (soak cycle {cycle + 1})"
        sources[replaced] = Case.model_validate(raw)
        path = h.write_case(sources[replaced], f"{graph}_{replaced}_{cycle}")
        timed(f"ingest --replace {replaced}", h, graph, "ingest", "--replace", str(path))
        timed(f"delete --task {deleted}", h, graph, "delete", "--task", deleted)
        path = h.write_case(sources[deleted], f"{graph}_{deleted}_{cycle}")
        timed(f"ingest {deleted}", h, graph, "ingest", str(path))
        timed(f"repair --task {repairing}", h, graph, "repair", "--task", repairing,
              exits=frozenset(FINISHED_EXITS))
        repaired.add(repairing)
        restarts.append(restart(h, graph, cycle))
        timed("tasks", h, graph, "tasks", "--json")
    started = time.monotonic()
    check = h.run(graph, "db", "check", timeout=None)
    print(f"  {'db check':<34} {time.monotonic() - started:7.1f} s  exit {check.returncode}: "
          f"{check.stdout.strip()[:200]}", flush=True)
    listed = h.run(graph, "tasks", "--json")
    started = time.monotonic()
    wrong = read_back(h, graph, sources)
    print(f"  {'read back every task':<34} {time.monotonic() - started:7.1f} s  "
          f"{len(sources) - len(wrong)}/{len(sources)} equal to their source"
          + (f"; differ: {wrong[:10]}" if wrong else ""), flush=True)
    print(f"  restarts (db start): {', '.join(f'{t:.1f}' for t in restarts)} s; "
          f"stored nodes at the end {stored_nodes(h, graph)}", flush=True)
    return (nodes >= h.soak_nodes and check.returncode == 0 and listed.returncode == 0
            and sorted(r["task_id"] for r in json.loads(listed.stdout)) == sorted(sources)
            and not wrong)


TRIALS: dict[str, Callable[[Harness, int], bool]] = {
    "replace-vs-replace": replace_vs_replace, "repair-vs-replace": repair_vs_replace,
    "follow-resume": follow_resume, "server-kill": server_kill, "replace-16k": replace_16k,
    "restart-loading": restart_loading, "follow-vs-writer": follow_vs_writer}
SLOW_TRIALS: dict[str, Callable[[Harness, int], bool]] = {"soak": soak}  # only when named


def _attempt(trial: Callable[[Harness, int], bool], h: Harness, name: str, seed: int) -> bool:
    """One trial; an exception is an incorrect trial, reported, and the run goes on."""
    try:
        return trial(h, seed)
    except Exception as exc:
        print(f"  {name} seed {seed}: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
        h.server.start()  # whatever happened, the next trial needs a running store
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--steps", type=int, default=1500, help="steps of the raced task")
    parser.add_argument("--only", default="", help="run only the trials whose name has this")
    parser.add_argument("--soak-nodes", type=int, default=200_000,
                        help="soak: nodes the store holds before the cycles")
    parser.add_argument("--soak-cycles", type=int, default=10, help="soak: cycles")
    args = parser.parse_args(argv)
    chosen = {n: t for n, t in TRIALS.items() if args.only in n}
    chosen |= {n: t for n, t in SLOW_TRIALS.items() if args.only and args.only in n}
    with tempfile.TemporaryDirectory(prefix="provrepair-reliability-") as tmp:
        h = Harness(Path(tmp), args.steps, args.soak_nodes, args.soak_cycles)
        h.server.start()
        try:
            rows = []
            for name, trial in chosen.items():
                trials = 1 if name in SLOW_TRIALS else args.trials  # one soak is minutes
                started = time.monotonic()
                correct = sum(_attempt(trial, h, name, seed) for seed in range(1, trials + 1))
                rows.append((name, trials, correct, time.monotonic() - started))
                extra = (f"; killed before the end: {h.killed_mid_stream}"
                         if name == "follow-resume" else "")
                print(f"{name:<20} trials {trials:>3}  correct {correct:>3}  "
                      f"({rows[-1][3]:.0f} s{extra})", flush=True)
        finally:
            h.server.stop()
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load {os.getloadavg()[0]:.2f}")
    return 0 if all(r[1] == r[2] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
