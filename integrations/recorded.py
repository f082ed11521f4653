"""`RecorderSink`: the agent's memory operations recorded into provrepair's own `Recorder`
(provenance/recorder.py), beside the steps the agent records itself: for an agent that records
natively, not with OpenTelemetry.

    with Recorder(graph, "conv-42") as rec:
        store = RecordingStore(agent_store, rec, namespace=("memories", "alice"))
        hits = store.search(("memories", "alice"), query="...")
        rec.step(step_id="s3", step_type="claim", used_ids=[store.last_step_id], ...)

Each operation becomes what the loaders make of the same operation in a trace or a transcript
(loaders/agent_run.py `RunBuilder`; README, "Recording your agent"), one step each:

| operation | recorded |
|---|---|
| a read | `memory_read` citing the version of each record returned (one not seen: a root) |
| a write of a record not seen, or not active | `memory_write` generating it |
| a write of an active record | `memory_update`: a new version superseding it |
| a delete | `memory_delete` invalidating the record's version (left deleted) |
| a failed write | its step with status error: nothing generated, nothing retired |

A record the recording has not seen existed in the agent's store before the run: a root
record (no `last_modified_by`), its content as returned (a delete's or an update's: unknown,
empty).

**Ids.** A record's agent id is the store's key (mem0's id), its namespace the task's
`memory_namespace` (`use_memory_namespace`: set by the first operation, one per task). Every
id is allocated against every id the recorder has seen or awaits (`taken_ids()`, with
provenance/state/memory.py's allocator): a record keeps its key as `memory_id` when that is
free, else it and every later version is `<key>~N` keeping the key in `record_id` (the
loaders' version ids); a step is `memop_001`, `memop_002`… (the next free). An agent that
cites the operation reads `last_step_id` (and `last_memory_ids`, the versions it read or
wrote).

Once the recorder is closed (the conversation is over), operations are no longer recorded,
as over OpenTelemetry outside any run: the next conversation's wrapper gets its Recorder.

**Clock.** Each operation is stamped `recorder.clock + 1` (after every event recorded), in the
recorder's latest turn, after that turn's latest step (`prev_step_ids`).

**A read** cites the version whose content is the one returned (the latest such; one a later
mutation retired is active again and the versions made after it are not: that mutation did not
take effect, as the loaders read a run); content no version has is a change made outside the
run: a new root version superseding the previous one.

**The dependencies of a write** (README, "Dependencies: the context window"): inside
`evidence(ids)` exactly those (record keys mean their current version); else the latest model
output (claim, plan, final answer) and everything recorded at or after its timestamp (the
output whose content it stores; without an output, everything before); and in both cases every
earlier input, step or record whose text the written content shows as a whole.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from provrepair.integrations.sink import MemorySink
from provrepair.loaders.agent_run import occurs_whole
from provrepair.loaders.otel import MEMORY_WRITES
from provrepair.provenance.edges import NodeKind
from provrepair.provenance.errors import CaseError
from provrepair.provenance.models import ExecutionStep, MemoryRecord, UserInput
from provrepair.provenance.recorder import Recorder
from provrepair.provenance.state.memory import allocate_id, retired_status, version_id
from provrepair.provenance.vocab import MemorySource, MemoryStatus, StepStatus, StepType

STEP_PREFIX = "memop_"
OUTPUTS = frozenset({StepType.CLAIM, StepType.PLAN, StepType.FINAL_ANSWER})


class RecorderSink(MemorySink):
    """The agent's memory operations as steps and records of the recorder's task (module
    docstring)."""

    def __init__(self, recorder: Recorder):
        super().__init__()
        self.recorder = recorder
        self.versions: dict[str, list[str]] = {}  # agent id → its versions' memory ids
        self._scanned = 0  # memories of the recorder already in `versions`
        self._next_step = 1
        self._reserved: set[str] = set()  # ids allocated by this operation, not yet recorded
        self._lock = threading.Lock()  # one operation at a time (a store shared by threads)

    @contextmanager
    def evidence(self, ids: Iterable[str]) -> Iterator[None]:
        """As every sink's, each id checked first (before the store acts on a write)."""
        ids = tuple(ids)
        for evidence in ids:
            self._cited(evidence)
        with super().evidence(ids):
            yield

    def check_namespace(self, namespace: str | None) -> None:
        if namespace is not None:
            self.recorder.use_memory_namespace(namespace)

    def search(self, records: list[dict[str, str]], *, query: str | None = None,
               namespace: str | None = None) -> None:
        with self._operation(namespace) as recording:
            if not recording:
                return
            ts, step_id = self._now(), self._step_id()
            found = list(dict.fromkeys(self._returned(r["id"], r["content"], ts)
                                       for r in records))
            self._step(step_id, StepType.MEMORY_READ,
                       f"Retrieved: {', '.join(found) or 'nothing'}"
                       + (f" (query: {query})" if query else ""), ts, found)
            self.last_memory_ids = found

    def emit(self, operation: str, *, records: list[dict[str, str]] | None = None,
             record_id: str | None = None, query: str | None = None,
             namespace: str | None = None, error: BaseException | None = None) -> None:
        if operation == "search_memory":
            self.search(records or [], query=query, namespace=namespace)
            return
        op = MEMORY_WRITES[operation]  # loaders/otel.py: create, update, upsert, delete
        written = records if records is not None else [{"id": str(record_id), "content": ""}]
        for record in written:
            with self._operation(namespace) as recording:
                if recording:
                    self._write(op, record["id"], record["content"], error)

    # -- operations ---------------------------------------------------------------------------

    @contextmanager
    def _operation(self, namespace: str | None) -> Iterator[bool]:
        """One operation at a time; False once the recording was closed (the conversation
        is over: an operation after it is part of no conversation, as one outside any run
        over OpenTelemetry, and is not recorded; the next conversation's wrapper gets its own
        Recorder). The first namespace an operation names is the task's, if the recording
        has none (another one: mem0's ids are global, recorded all the same; a call naming
        it was refused before it ran, `check_namespace`)."""
        with self._lock:
            if self.recorder.task.get("complete"):
                self.last_step_id, self.last_memory_ids = None, []
                yield False
                return
            if namespace is not None and self.recorder.task.get("memory_namespace") is None:
                self.recorder.use_memory_namespace(namespace)
            try:
                yield True
            finally:
                self._reserved.clear()  # recorded, or given up with the operation

    def _write(self, op: str, key: str, content: str, error: BaseException | None) -> None:
        rec = self.recorder
        ts, step_id = self._now(), self._step_id()
        used = self._dependencies(content)
        current = self._current(key)
        if op in ("update", "delete") and current is None:  # in the store before the run
            current = self._root(key, "", ts)
        active = current is not None and self._memory(current).status is MemoryStatus.ACTIVE
        invalidated = [current] if current is not None and (op == "delete" or active) else []
        step_type = (StepType.MEMORY_DELETE if op == "delete" else
                     StepType.MEMORY_UPDATE if invalidated else StepType.MEMORY_WRITE)
        new = None if op == "delete" or error is not None else self._new_id(key)
        self._step(step_id, step_type, content or f"{op} {key}", ts, used,
                   invalidated=invalidated, generated=[new] if new else [],
                   status=StepStatus.ERROR if error is not None else StepStatus.OK)
        self.last_memory_ids = [new] if new else [] if error is not None else invalidated
        if error is not None:
            return
        if new is not None:
            rec.memory(self._record(new, key, content, ts, step_id,
                                    invalidated[0] if invalidated else None))
        retire = retired_status(step_type)  # provenance/state/memory.py
        if retire is not None:
            for old in invalidated:
                self._set_status(old, retire, step_id, ts)

    def _returned(self, key: str, content: str, ts: int) -> str:
        """The version of `key` a read returned (module docstring, "A read")."""
        versions = self._versions(key)
        match = [v for v in versions if self._memory(v).content == content]
        if not match:
            current = versions[-1] if versions else None
            version = self._root(key, content, ts, supersedes=current)
            if current is not None and self._memory(current).status is MemoryStatus.ACTIVE:
                self._set_status(current, MemoryStatus.SUPERSEDED, None, ts)
            return version
        version = match[-1]
        for later in versions[versions.index(version) + 1:]:
            if self._memory(later).status is MemoryStatus.ACTIVE:
                self._set_status(later, MemoryStatus.SUPERSEDED, None, ts)
        versions.remove(version)
        versions.append(version)  # the current one again
        if self._memory(version).status is not MemoryStatus.ACTIVE:
            self._set_status(version, MemoryStatus.ACTIVE, None, ts)
        return version

    def _root(self, key: str, content: str, ts: int, supersedes: str | None = None) -> str:
        """A record the run did not write (it was in the agent's store before)."""
        memory_id = self._new_id(key)
        self.recorder.memory(self._record(memory_id, key, content, ts, None, supersedes))
        return memory_id

    # -- dependencies -------------------------------------------------------------------------

    def _dependencies(self, content: str) -> list[str]:
        """What a write depends on (module docstring)."""
        records = self.recorder.records
        if self.evidence_ids is not None:
            used = [self._cited(i) for i in self.evidence_ids]
        else:
            anchor = next((s for s in self._steps_reversed() if s.step_type in OUTPUTS), None)
            since = None if anchor is None else anchor.timestamp
            used = [anchor.step_id] if anchor is not None else []
            for node_id, record in records.items():
                if since is None or _time(record) >= since:
                    used.append(node_id)
                    if isinstance(record, ExecutionStep) and \
                            record.step_type is StepType.MEMORY_READ:
                        used += record.used_ids  # what it returned, as the loaders name it
        if content.strip():
            used += [node_id for node_id, record in records.items()
                     if _shows(content, _text(record))]
        return list(dict.fromkeys(used))

    def _cited(self, evidence: str) -> str:
        """An evidence id: a record's key (its current version), or any id recorded."""
        current = self._current(evidence)
        if current is not None:
            return current
        if evidence in self.recorder.records:
            return evidence
        raise CaseError(self.recorder.task_id, "evidence", evidence,
                        "names nothing recorded before (a write's evidence is a record's "
                        "key or an id the recording holds)")

    # -- the recorder's records -------------------------------------------------------------

    def _versions(self, key: str) -> list[str]:
        """The versions of the agent's record `key` the recording holds, oldest first (what
        the agent recorded itself included: a record's agent id is its `record_id`, else its
        `memory_id`)."""
        memories = self.recorder.order[NodeKind.MEMORY]
        for memory_id in memories[self._scanned:]:
            record = self._memory(memory_id)
            versions = self.versions.setdefault(record.record_id or memory_id, [])
            if memory_id not in versions:
                versions.append(memory_id)
        self._scanned = len(memories)
        return self.versions.get(key, [])

    def _current(self, key: str) -> str | None:
        versions = self._versions(key)
        return versions[-1] if versions else None

    def _memory(self, memory_id: str) -> MemoryRecord:
        record = self.recorder.records[memory_id]
        assert isinstance(record, MemoryRecord)
        return record

    def _taken(self) -> set[str]:
        """Every id the recorder has seen or awaits, and those this operation allocated."""
        return self.recorder.taken_ids() | self._reserved

    def _new_id(self, key: str) -> str:
        """The key itself for a record's first version when free, else `<key>~N`."""
        taken = self._taken()
        memory_id = key if key not in taken else version_id(key, taken)
        self._reserved.add(memory_id)
        return memory_id

    def _step_id(self) -> str:
        step_id = allocate_id(STEP_PREFIX, self._taken(), start=self._next_step)
        self._next_step = int(step_id[len(STEP_PREFIX):]) + 1
        self._reserved.add(step_id)
        return step_id

    def _now(self) -> int:
        clock = self.recorder.clock
        return 1 if clock is None else clock + 1

    def _record(self, memory_id: str, key: str, content: str, ts: int, by: str | None,
                supersedes: str | None) -> MemoryRecord:
        return MemoryRecord(
            memory_id=memory_id, record_id=None if memory_id == key else key,
            task_id=self.recorder.task_id, content=content, source=MemorySource.AGENT_SUMMARY,
            last_modified_by=by, created_at=ts, last_modified_at=ts, derived_from=[],
            supersedes=supersedes, status=MemoryStatus.ACTIVE)

    def _set_status(self, memory_id: str, status: MemoryStatus, by: str | None,
                    ts: int) -> None:
        record = self._memory(memory_id)
        self.recorder.memory(record.model_copy(update={
            "status": status, "last_modified_at": ts,
            "last_modified_by": by if by is not None else record.last_modified_by}))

    def _step(self, step_id: str, step_type: StepType, content: str, ts: int,
              used: list[str], *, invalidated: list[str] | None = None,
              generated: list[str] | None = None, status: StepStatus = StepStatus.OK) -> None:
        turn = self._turn()
        prev = next((s.step_id for s in self._steps_reversed() if s.turn == turn), None)
        self.recorder.step(
            step_id=step_id, step_type=step_type, content=content,
            prev_step_ids=[prev] if prev else [], next_step_ids=[],
            invalidated_memory_ids=invalidated or [], generated_memory_ids=generated or [],
            used_ids=used, timestamp=ts, turn=turn, status=status)
        self.last_step_id = step_id

    def _turn(self) -> int:
        """The recorder's latest turn (1 before any)."""
        turns = [r.turn for r in self.recorder.records.values()
                 if isinstance(r, (UserInput, ExecutionStep))]
        return max(turns, default=1)

    def _steps_reversed(self) -> Iterator[ExecutionStep]:
        records = self.recorder.records
        return (r for i in reversed(self.recorder.order[NodeKind.STEP])
                if isinstance(r := records[i], ExecutionStep))


def _time(record: UserInput | MemoryRecord | ExecutionStep) -> int:
    return record.created_at if isinstance(record, MemoryRecord) else record.timestamp


def _text(record: UserInput | MemoryRecord | ExecutionStep) -> str:
    """What an earlier item said, for a write that shows it (a read's content is ids)."""
    if isinstance(record, ExecutionStep) and record.step_type is StepType.MEMORY_READ:
        return ""
    return record.content.strip()


def _shows(content: str, text: str) -> bool:
    """Whether `content` shows `text` as a whole, as it is or JSON-escaped (a structure
    quoting it), as the loaders read it (loaders/agent_run.py)."""
    if not text:
        return False
    forms = dict.fromkeys((text, json.dumps(text, ensure_ascii=False)[1:-1]))
    return any(occurs_whole(form, content) for form in forms)
