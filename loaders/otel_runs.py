"""Agent runs captured live from a stream of OTLP spans, kept whole: the core of the live
exporter (loaders/otel_live.py) and of `ingest --from otel --follow`.

What it guarantees (README, "Recording your agent"):
- **A conversation is one task, across traces and requests.** A run is keyed by its
  conversation (`gen_ai.conversation.id`, or the dialect's session id): the one its outermost
  `invoke_agent` span carries, else one any span of the trace carries, else `trace-<id>` for a
  trace with an agent span. When a trace ends (its local root span arrives), a later trace
  extends the task and never replaces it, whichever process served the earlier request: its
  spans are read on top of the conversation's reading kept here and only what they add is
  written (loaders/otel_extend.py); without a usable reading (first trace here, another
  process wrote the task since, a recovered or content-less trace, spans that change what is
  stored), the task is derived again from *every* journaled span of the conversation (a
  repaired task: that reading merged into it, never replaced; below).
- **Sub-agents nest.** An `invoke_agent` span inside another one ends first; nothing is stored
  until the trace's root ends, and every span of the trace joins the outer run's task (a span
  ending after its trace's root, a background memory write, joins that task too). A
  sub-agent in a trace of its own (its outermost `invoke_agent` span links to a span of
  another trace) joins the run of that trace: kept until it ends (or found in the journal,
  stored by another capture), else, once `recover_after_s` has passed and the parent's trace
  is not open here, or at the end of the capture, stored as its own task with a warning.
- **Nothing is lost silently, and a crash loses at most one flush.** Each export's GenAI spans
  are written to the journal (`:CaptureSpan` nodes, one statement per flush) before anything
  else; spans whose write fails (the store away) are kept and written first at the next
  export, their trace stored only then (at the end of the capture, without them and with a
  warning on the task); a trace left open by a crash is recovered once its spans are older than
  `recover_after_s` (at a capture's start, or a running capture's next export), and stored
  with a warning on the task. A trace whose task another writer holds (a repair, an
  `ingest --replace` of the conversation) or whose store is away waits in a queue and is
  stored at a later export, read from the journal; a later trace of the same conversation
  waits behind it, in order (it carries the earlier one's calls). A run whose inference spans
  carry no message content is stored without the model's claims, with a warning on the task;
  one that cannot be read at all is reported in `errors` and logged, its spans kept in the
  journal.
- **The same runs as a file ingest.** A trace is a run when it has an agent span or a span
  that makes a step, LLM calls outside any agent run included (`trace-<id>`, as
  `ingest --from otel` reads them); runs are read by loaders/otel.py `read_run`, as files are.
- **A later trace never undoes a repair.** A record whose status a later trace changes keeps
  the status a repair gave it (the trace's is recorded beside it and its step is stored). A
  repaired conversation is never replaced: when its journal must be read again whole, that
  reading is merged into the stored task (loaders/otel_merge.py), the repair's runs, marks,
  replayed nodes and statuses kept, the trace's steps stored, so the next plan sees them; a
  repair's node ids are never given to a later trace's nodes.
- **Buffers are bounded.** Spans of open traces not (yet) seen to make a run (only agent
  frames or embeddings so far) are kept up to `max_unclaimed_spans`; past it, the oldest such
  trace is dropped, counted in `dropped_spans` and logged, and so is a trace that ends with
  nothing to store.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from provrepair.loaders.agent_run import WARNINGS
from provrepair.loaders.otel import (
    RunReading,
    Span,
    blind_spans,
    makes_step,
    otlp_spans,
    read_run,
    sub_agent_link,
    with_warnings,
)
from provrepair.loaders.otel_dialects import genai_attributes, normalize_document
from provrepair.loaders.otel_extend import CapturedRun
from provrepair.loaders.otel_merge import Stored, merge_reading
from provrepair.loaders.otlp_json import document
from provrepair.provenance.agent_records import link_node_rows, link_stored_task
from provrepair.provenance.errors import CaseError, StoreUnavailable, TaskConflict, UserError
from provrepair.provenance.ingest import replace_locked
from provrepair.provenance.keys import task_key
from provrepair.provenance.lock import new_owner_id, task_lock
from provrepair.provenance.models import Case
from provrepair.provenance.store.base import GraphStore, batched

log = logging.getLogger("provrepair.capture")

DEFAULT_MAX_UNCLAIMED_SPANS = 2_000
DEFAULT_RECOVER_AFTER_S = 300.0
DEFAULT_MAX_READINGS = 64  # conversations whose reading is kept between their traces
MAX_DONE_TRACES = 10_000
REMOTE_PARENT = 0x300  # SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK | SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK


@dataclass
class OpenTrace:
    """What the journal's spans of a trace not yet ended say about its run."""

    spans: int = 0
    agent: bool = False
    agent_conversation: str | None = None  # of the last-ended (outermost) invoke_agent
    conversation: str | None = None        # the first any span carried
    parent: tuple[str, str] | None = None  # (trace, span) the outermost invoke_agent links to
    waiting_since: int = 0                 # when it began waiting for that parent's trace
    steps: bool = False                    # a span of it makes a step (loaders/otel.py)

    def note(self, attributes: dict[str, Any], span: Span) -> None:
        self.spans += 1
        self.steps = self.steps or makes_step(attributes.get("gen_ai.operation.name"))
        if attributes.get("gen_ai.operation.name") == "invoke_agent":
            # a sub-agent in a trace of its own: the last-ended (outermost) link wins
            self.parent = sub_agent_link(replace(span, attributes=attributes)) or self.parent
        conversation = attributes.get("gen_ai.conversation.id")
        conversation = str(conversation) if conversation else None
        if attributes.get("gen_ai.operation.name") == "invoke_agent":
            self.agent = True
            # parents end after their children: the last agent span to end is the outermost
            self.agent_conversation = conversation or self.agent_conversation
        self.conversation = self.conversation or conversation

    def run_key(self, trace_id: str) -> str | None:
        if self.agent_conversation or self.conversation:
            return self.agent_conversation or self.conversation
        # a trace with an agent or a step is a run (calls outside any agent run too: a file
        # ingest reads them so, loaders/otel.py cases_from_spans)
        return f"trace-{trace_id}" if self.agent or self.steps else None


class LiveRuns:
    """Spans as they are exported → the journal → one task per conversation; see the module
    docstring. Not thread-safe: the exporter serializes calls."""

    def __init__(self, store: GraphStore, *, max_unclaimed_spans: int = DEFAULT_MAX_UNCLAIMED_SPANS,
                 recover_after_s: float = DEFAULT_RECOVER_AFTER_S,
                 max_readings: int = DEFAULT_MAX_READINGS,
                 clock: Callable[[], int] = time.time_ns):
        self.store, self.clock = store, clock
        self.max_unclaimed_spans = max_unclaimed_spans
        self.open: dict[str, OpenTrace] = {}  # insertion order: the oldest first
        self.done: dict[str, str] = {}  # ended trace → its run: a span that ends late joins it
        self.stored: list[str] = []
        self.errors: list[str] = []
        self.dropped_spans = 0
        self.retry: dict[str, tuple[str, bool, str | None]] = {}  # trace → how to store again
        self.children: dict[str, OpenTrace] = {}  # sub-agent traces waiting for their parent
        self.deferred: dict[str, None] = {}  # ended traces waiting for their spans' journal
        self.stepless: set[str] = set()  # ended traces of agent frames only
        self.readings: dict[str, CapturedRun] = {}  # run → its reading, the latest last
        self.max_readings = max_readings
        self.extensions = self.rebuilds = 0  # how traces were stored (bench/, tests)
        self.recover_after_ns = int(recover_after_s * 1e9)
        self.recovered_at = 0
        self.unjournaled: list[dict[str, Any]] = []  # journal rows a failed write kept
        self.journal_error = ""  # why the last journal write failed
        self._recover()

    # -- the stream ---------------------------------------------------------------------------

    def add(self, spans: Sequence[dict[str, Any]], where: str = "export") -> None:
        """One flush of OTLP/JSON span objects: journaled (one statement), then every trace
        whose local root arrived is resolved. A malformed span raises InputError naming it,
        before anything is written."""
        parsed = otlp_spans(document(list(spans)), where)  # checks ids and times
        now, rows, ended = self.clock(), [], []
        for raw, span in zip(spans, parsed, strict=True):
            attributes = genai_attributes(span.attributes)
            if attributes.get("gen_ai.operation.name") is not None:
                self.open.setdefault(span.trace_id, OpenTrace()).note(attributes, span)
                rows.append({"span_key": f"{span.trace_id}/{span.span_id}", "props": {
                    "trace_id": span.trace_id, "start_ns": span.start_ns, "written_ns": now,
                    "span_json": json.dumps(raw, ensure_ascii=False)}})
            if _is_local_root(raw) or span.trace_id in self.done:
                ended.append(span.trace_id)
        self._journal(rows)
        held = self._unjournaled_traces()
        for trace_id in dict.fromkeys([*ended, *self.deferred]):
            if trace_id in held:  # resolved once its spans are journaled (a later export)
                self.deferred[trace_id] = None
            else:
                self.deferred.pop(trace_id, None)
                self._resolve(trace_id)
        self._bound()
        self._expire_children(now)
        self._retry()
        if now - self.recovered_at >= self.recover_after_ns:
            self._recover()  # a process that crashed since this one started

    def finish(self) -> None:
        """End of capture (shutdown, end of input): every open trace is resolved; one whose
        spans could not be journaled, with a warning on its task."""
        self._journal([])
        held = self._unjournaled_traces()
        self.deferred.clear()
        for trace_id in list(self.open):
            note = None
            if trace_id in held:
                note = (f"{held[trace_id]} span(s) of trace {trace_id} could not be written to "
                        f"the capture journal ({self.journal_error}): the run is stored "
                        "without them")
            self._resolve(trace_id, note=note)
        self._expire_children(None)
        self._retry()

    def _journal(self, rows: list[dict[str, Any]]) -> None:
        """The rows a failed write kept first (one statement), then these (another): a row
        whose write fails (the store away) is kept, written first at the next export, and
        its trace is resolved only once it is (nothing is lost silently: the SDK does not
        export a failed batch again)."""
        held, self.unjournaled = self.unjournaled, []
        for batch in (held, rows):
            if not batch:
                continue
            try:
                self.store.run("append_capture_spans", {"rows": batch})
            except StoreUnavailable as exc:
                self.unjournaled += batch
                self.journal_error = f"{type(exc).__name__}: {exc}"
                log.warning("%d GenAI span(s) not written to the capture journal (%s); kept, "
                            "and written first at the next export", len(batch),
                            self.journal_error)

    def _unjournaled_traces(self) -> dict[str, int]:
        """Trace → how many of its spans are kept, not yet journaled."""
        held: dict[str, int] = {}
        for row in self.unjournaled:
            trace = str(row["props"]["trace_id"])
            held[trace] = held.get(trace, 0) + 1
        return held

    # -- traces → runs ------------------------------------------------------------------------

    def _resolve(self, trace_id: str, *, recovered: bool = False,
                 note: str | None = None) -> None:
        trace = self.open.pop(trace_id, None)
        if trace is None:
            return  # a root without GenAI spans (an HTTP server span…), or resolved already
        if trace.parent is not None:  # a sub-agent's trace: it joins its parent's run
            key = self.done.get(trace.parent[0]) or self._stored_run(trace.parent[0])
            if key is None:  # the parent's trace has not ended (here or elsewhere): wait
                trace.waiting_since = self.clock()
                self.children[trace_id] = trace
                return
        else:  # a late span of a trace already stored joins its run, whatever it names
            key = self.done.get(trace_id)
            if key is None:
                key = trace.run_key(trace_id)
                if key is None or key == f"trace-{trace_id}":  # stored by another capture?
                    key = self._stored_run(trace_id) or key
        if key is None or (not trace.steps and key == f"trace-{trace_id}"):
            self._drop(trace_id, trace.spans, "its root span ended with no span that makes a step")
            return
        if not trace.steps:  # agent frames only: part of its conversation's run, no run alone
            self.stepless.add(trace_id)
        self._store_trace(key, trace_id, recovered, note)

    def _store_trace(self, key: str, trace_id: str, recovered: bool, note: str | None) -> None:
        """The trace joins run `key`, and so do sub-agent traces that waited for it."""
        self.done[trace_id] = key
        while len(self.done) > MAX_DONE_TRACES:
            del self.done[next(iter(self.done))]
        self._try_store(key, trace_id, recovered, note)
        for child, trace in list(self.children.items()):
            if trace.parent is not None and trace.parent[0] == trace_id:
                del self.children[child]
                self._store_trace(key, child, False, None)

    def _stored_run(self, trace_id: str) -> str | None:
        """The run a trace another capture stored joined (its journal says), if any."""
        rows = self.store.run("get_capture_trace_run", {"trace_id": trace_id})
        return str(rows[0]["task_id"]) if rows else None

    def _expire_children(self, now: int | None) -> None:
        """Sub-agent traces whose parent's trace did not arrive within `recover_after_s` (all
        of them when `now` is None: the capture ends): each stored as its own run, with a
        warning on the task. One whose parent's trace is open here waits for it, however long
        the parent runs."""
        for child, trace in list(self.children.items()):
            assert trace.parent is not None
            if now is not None and (now - trace.waiting_since < self.recover_after_ns
                                    or trace.parent[0] in self.open):
                continue
            del self.children[child]
            note = (f"sub-agent trace {child} links to span {trace.parent[1]} of trace "
                    f"{trace.parent[0]}, which did not arrive: its run is a task of its own")
            self._store_trace(trace.run_key(child) or f"trace-{child}", child, False, note)

    def _try_store(self, key: str, trace_id: str, recovered: bool, note: str | None) -> None:
        """Store the trace, or queue it (journaled already) behind what waits: a conversation
        whose earlier trace is waiting keeps its order, since a later request carries the
        earlier one's calls and results."""
        if any(waiting[0] == key for waiting in self.retry.values()):
            self.retry[trace_id] = (key, recovered, note)
            return
        try:
            self._store_run(key, trace_id, recovered, note)
        except (TaskConflict, StoreUnavailable) as exc:
            # another writer holds the task (a repair, an ingest --replace), or the store is
            # away: stored again at a later export, from the journal
            self.retry[trace_id] = (key, recovered, note)
            log.warning("trace %s of run %r not stored yet (%s: %s); retried at the next "
                        "export", trace_id, key, type(exc).__name__, exc)
        except UserError as exc:
            message = f"trace {trace_id} of run {key!r} not stored: {type(exc).__name__}: {exc}"
            self.errors.append(message)
            log.warning("%s (its spans stay in the capture journal)", message)

    def _retry(self) -> None:
        """The queued traces, in the order they ended; a conversation's stop at its first that
        still cannot be stored."""
        waiting, self.retry = self.retry, {}
        for trace_id, (key, recovered, note) in waiting.items():
            self._try_store(key, trace_id, recovered, note)

    def _store_run(self, key: str, trace_id: str, recovered: bool, note: str | None) -> None:
        """The trace's spans added to its run's task: extended in the trace's cost when this
        capture holds the run's reading and nothing else wrote the task since, else read
        again from the whole journal of the run (loaders/otel_extend.py)."""
        tkey = task_key(key)
        if trace_id in self.stepless:
            self.stepless.discard(trace_id)
            if not self.store.run("get_task", {"task_key": tkey}):
                # agent frames only and no task yet: as a file ingest, no task; its spans
                # join the run's journal, read with the run's next trace
                self.store.run("assign_capture_trace", {
                    "trace_id": trace_id, "task_key": tkey, "recovered": recovered})
                return
        run = self.readings.pop(key, None)
        if run is None or recovered or note or not self._extend(run, trace_id):
            run = self._rebuild(key, tkey, trace_id, recovered, note)
        # assigned only once stored: a crash before this leaves the trace recoverable
        self.store.run("assign_capture_trace", {"trace_id": trace_id, "task_key": tkey,
                                                "recovered": recovered})
        if run is not None:  # kept for the run's next trace (the least recently used goes)
            self.readings[key] = run
            while len(self.readings) > self.max_readings:
                del self.readings[next(iter(self.readings))]
        if key not in self.stored:
            self.stored.append(key)

    def _rebuild(self, key: str, tkey: str, trace_id: str, recovered: bool, note: str | None
                 ) -> CapturedRun | None:
        """The run read again from every journaled span of it: the task replaced, or, when
        a repair ran on it, that reading merged into it (loaders/otel_merge.py); decided and
        written under the task lock, so a repair cannot slip in between. The reading is
        returned for the next trace when the store holds exactly it and no warning makes
        it partial."""
        rows = self.store.run("list_capture_run", {"task_key": tkey, "trace_id": trace_id})
        case, warnings, reading = run_from_journal(
            key, [r["span_json"] for r in rows], recovered=[bool(r["recovered"]) for r in rows])
        if recovered:
            warnings.append(f"trace {trace_id} was recovered after an interrupted capture "
                            "(its root span never arrived): the run may be cut short")
        if note:
            warnings.append(note)
        token = new_owner_id("capture")
        with task_lock(self.store, key, new_owner_id("capture"), "capture"):
            task = self.store.run("get_capture_task", {"task_key": tkey})
            repairs = int(task[0]["repairs"]) if task else 0
            if repairs:
                exact, ids = self._merge(tkey, task[0]["props"], reading, warnings, token)
            else:
                case = with_warnings(case, warnings)
                replace_locked(self.store, case)
                self.store.run("set_task_warnings", {  # none: no property
                    "task_key": tkey, "warnings": case.world.get(WARNINGS) or None})
                self.store.run("merge_task", {"task_key": tkey,
                                              "props": {"capture_token": token}})
                exact, ids = True, set()
        self.rebuilds += 1
        for warning in warnings:
            log.warning("task %s: %s", key, warning)
        if not exact or warnings:
            return None
        run = CapturedRun.stored(tkey, reading, token)
        run.reserve(ids, repairs)
        return run

    def _merge(self, tkey: str, task: dict[str, Any], reading: RunReading, warnings: list[str],
               token: str) -> tuple[bool, set[str]]:
        """A repaired task: the reading merged into it (loaders/otel_merge.py), under the
        lock the caller holds. The task record first (the sources a later merge matches
        nodes by, and a token no cached reading holds), then nodes, records, edges. Returns
        whether the store now holds exactly the reading, and every node id stored."""
        nodes = [r["props"] for r in self.store.run("list_task_nodes", {"task_key": tkey})]
        edges = {(r["label"], r["src"], r["dst"])
                 for r in self.store.run("list_task_edges", {"task_key": tkey})}
        merge = merge_reading(tkey, Stored(task, nodes, edges), reading, warnings)
        self.store.run("merge_task", {"task_key": tkey,
                                      "props": {**merge.task, "capture_token": token}})
        for batch in batched(merge.nodes + merge.grown):
            self.store.run("merge_nodes", {"rows": batch})
        for batch in batched(merge.changed):  # a repair's status stays
            self.store.run("merge_captured_memories", {"rows": batch})
        for batch in batched(merge.edges):
            self.store.run("merge_edges", {"rows": batch})
        link_captured(self.store, tkey, merge.task, merge.nodes + merge.changed, task)
        if merge.kept:
            log.warning("task %s: %s", reading.task_id, merge.task["warnings"][-1])
        return merge.exact, {str(p["id"]) for p in nodes} | {
            str(r["props"]["id"]) for r in merge.nodes}

    def _extend(self, run: CapturedRun, trace_id: str) -> bool:
        """The trace added to the stored task (loaders/otel_extend.py), under the task lock;
        False when it must be read again whole: another capture wrote the task since (its
        capture token differs), the trace lacks message content, or its spans change what
        is stored beyond adding to it."""
        with task_lock(self.store, run.reading.task_id, new_owner_id("capture"), "capture"):
            stored = self.store.run("get_capture_task", {"task_key": run.key})
            if not stored or stored[0]["props"].get("capture_token") != run.token:
                return False
            if stored[0]["repairs"] != run.repairs:  # a repair wrote nodes since: their ids
                run.reserve({str(r["id"]) for r in self.store.run(
                    "list_task_node_ids", {"task_key": run.key})}, int(stored[0]["repairs"]))
            rows = self.store.run("list_capture_trace", {"trace_id": trace_id})
            spans = journal_spans(run.reading.task_id, [r["span_json"] for r in rows])
            if any(r["recovered"] for r in rows) or blind_spans(spans):
                return False
            try:
                extension = run.extend(spans)
            except CaseError:  # said by the full reading, naming span and trace
                return False
            if extension is None:
                return False
            # the token first: a crash part-way leaves a task no cached reading matches
            run.token = new_owner_id("capture")
            self.store.run("merge_task", {"task_key": run.key,
                                          "props": {"capture_token": run.token}})
            for batch in batched(extension.nodes):
                self.store.run("merge_nodes", {"rows": batch})
            for batch in batched(extension.changed):  # a repair's status stays
                self.store.run("merge_captured_memories", {"rows": batch})
            for batch in batched(extension.edges):
                self.store.run("merge_edges", {"rows": batch})
            self.store.run("merge_task", {"task_key": run.key, "props": extension.task})
            link_captured(self.store, run.key, extension.task, extension.nodes,
                          stored[0]["props"])
        self.extensions += 1
        return True

    def _bound(self) -> None:
        unclaimed = [(t, o.spans) for t, o in self.open.items() if o.run_key(t) is None]
        total = sum(n for _, n in unclaimed)
        for trace_id, spans in unclaimed:
            if total <= self.max_unclaimed_spans:
                return
            del self.open[trace_id]
            self._drop(trace_id, spans, f"more than {self.max_unclaimed_spans} spans of traces "
                                        "that make no run yet were waiting "
                                        "(max_unclaimed_spans)")
            total -= spans

    def _drop(self, trace_id: str, spans: int, why: str) -> None:
        self.store.run("delete_capture_trace", {"trace_id": trace_id})
        self.dropped_spans += spans
        log.warning("dropped %d GenAI span(s) of trace %s: %s (%d dropped so far)",
                    spans, trace_id, why, self.dropped_spans)

    def _recover(self) -> None:
        """Traces a crashed capture left open (journaled more than `recover_after_s` ago, not
        open here): resolved now, each run stored with a warning. At start, then at most once
        per `recover_after_s`."""
        self.recovered_at = self.clock()
        rows = [row for row in self.store.run(
                    "list_unassigned_capture",
                    {"written_before": self.recovered_at - self.recover_after_ns})
                if row["trace_id"] not in self.open and row["trace_id"] not in self.children]
        for row in rows:
            raw = json.loads(row["span_json"])
            (span,) = otlp_spans(document([raw]), "capture journal")
            self.open.setdefault(row["trace_id"], OpenTrace()).note(
                genai_attributes(span.attributes), span)
        for trace_id in {row["trace_id"]: None for row in rows}:
            self._resolve(trace_id, recovered=True)


def _is_local_root(raw: dict[str, Any]) -> bool:
    """No parent, or a parent in another process (OTLP span flags: parent is remote)."""
    flags = raw.get("flags")
    remote = isinstance(flags, int) and flags & REMOTE_PARENT == REMOTE_PARENT
    return not raw.get("parentSpanId") or remote


def journal_spans(key: str, span_json: Iterable[str]) -> list[Span]:
    """Journaled OTLP/JSON spans (any dialect) → spans in reading order."""
    doc = normalize_document(document([json.loads(s) for s in span_json]))
    return sorted(otlp_spans(doc, f"capture journal of {key}"),
                  key=lambda s: s.order)


def run_from_journal(key: str, span_json: Iterable[str], *, recovered: Sequence[bool] = ()
                     ) -> tuple[Case, list[str], RunReading]:
    """Journaled OTLP/JSON spans of one run → its case, the warnings for its task, and the
    reading that gave the case: read as a file ingest
    reads them (loaders/otel.py `read_run`). Every span joins the run, whatever conversation
    a sub-agent's spans name (they nest in the outer run)."""
    spans = journal_spans(key, span_json)
    warnings = ([f"{sum(recovered)} span(s) recovered after an interrupted capture"]
                if any(recovered) else [])
    case, more, reading = read_run(key, spans)
    return case, warnings + more, reading


def link_captured(store: GraphStore, key: str, task: dict[str, Any],
                  nodes: list[dict[str, Any]], stored: dict[str, Any]) -> None:
    """A shared memory's records (provenance/agent_records.py) as a trace extends a task
    (`task`: the properties written, `stored`: as they were): the nodes written; every node
    so far when this request is the first to name the namespace."""
    namespace = task.get("memory_namespace")
    if namespace and stored.get("started_at") is None:
        link_stored_task(store, key, namespace)
    else:
        link_node_rows(store, key, namespace, nodes)
