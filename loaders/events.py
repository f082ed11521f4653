"""JSONL event streams (`provrepair ingest --follow FILE|-`), one event per line:

    {"kind": "task", "task_id": "t1", "domain": "shopping", "tools": [...], "world": {...},
     "memory_namespace": "user-42"}
    {"kind": "user_input", "input_id": "u1", "task_id": "t1", "turn": 1, ...}
    {"kind": "memory", "memory_id": "m1", "task_id": "t1", ...}
    {"kind": "step", "step_id": "s1", "task_id": "t1", ...}
    {"kind": "faults", "task_id": "t1", "diagnosed_faults": ["m1"]}
    {"kind": "end", "task_id": "t1"}

The record fields are those of docs/case-format.md; `task` (optional, before the task's first
record) and `end` (closes a task) are stream extensions. Several tasks may interleave; each
gets its own `Recorder`, so events are validated and written exactly as the live API does.
A bad line stops the stream with an error naming the line; what was flushed before it stays
(it is a live record, not a file ingested all or nothing), and replaying the same stream
later resumes: events already stored are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from provrepair.loaders import strict_json
from provrepair.provenance.errors import CaseError, InputError, ProvrepairError, UserError
from provrepair.provenance.models import ToolSpec
from provrepair.provenance.parsing import parse_model
from provrepair.provenance.recorder import Recorder
from provrepair.provenance.store.base import GraphStore

RECORD_KINDS = ("user_input", "memory", "step")


@dataclass
class StreamResult:
    events: int = 0
    closed: list[str] = field(default_factory=list)
    open: list[str] = field(default_factory=list)


class EventStream:
    """Feed decoded events to one Recorder per task."""

    def __init__(self, store: GraphStore, batch_size: int = 64):
        self.store, self.batch_size = store, batch_size
        self.recorders: dict[str, Recorder] = {}
        self.result = StreamResult()

    def feed(self, event: Any, where: str) -> None:
        try:
            self._dispatch(event)
        except CaseError as exc:
            raise CaseError(exc.task_id, exc.field, exc.offending_id,
                            f"{exc.problem} [{where}]") from exc
        except UserError as exc:
            raise type(exc)(f"{exc} [{where}]") from exc
        self.result.events += 1

    def finish(self, *, close_open: bool) -> StreamResult:
        """Flush every task; close (validate + mark complete) those still open if asked."""
        for task_id, recorder in list(self.recorders.items()):
            if close_open:
                recorder.close()
                self.result.closed.append(task_id)
            else:
                recorder.flush()
                recorder.release()  # still open: a later stream resumes it
                self.result.open.append(task_id)
        self.recorders.clear()
        return self.result

    def flush(self) -> None:
        for recorder in self.recorders.values():
            recorder.flush()

    def abort(self) -> None:
        """The stream was refused (a bad line): each open task keeps what was valid before
        it (flushed, as a Recorder leaving its block on an error does) and its lock is given
        back, so the next writer of the task is not held off; the tasks stay incomplete."""
        for recorder in self.recorders.values():
            try:
                recorder.flush()
            except ProvrepairError:
                pass  # a dead store: nothing more to keep; the release below is best-effort
            finally:
                recorder.release()
        self.recorders.clear()

    def _dispatch(self, event: Any) -> None:
        if not isinstance(event, dict):
            raise InputError(f"an event is a JSON object, got {type(event).__name__}")
        kind, task_id = event.get("kind"), event.get("task_id")
        if not isinstance(task_id, str):
            raise CaseError(None, "task_id", None, "every event needs a string task_id")
        fields = {k: v for k, v in event.items() if k != "kind"}
        if kind == "task":
            self._start(task_id, fields)
        elif kind in RECORD_KINDS:
            getattr(self._recorder(task_id), kind)(**fields)
        elif kind == "faults":
            faults = fields.get("diagnosed_faults")
            if not isinstance(faults, list) or not all(isinstance(f, str) for f in faults):
                raise CaseError(task_id, "diagnosed_faults", None, "expected a list of memory ids")
            self._recorder(task_id).faults(faults)
        elif kind == "end":
            recorder = self._recorder(task_id)
            if not recorder.records:  # an `end` alone would store an empty, complete task
                recorder.release()
                del self.recorders[task_id]
                raise CaseError(task_id, "kind", None, "`end` of a task that has no recorded "
                                "events (in this stream or the store)")
            recorder.close()
            del self.recorders[task_id]
            self.result.closed.append(task_id)
        else:
            raise CaseError(task_id, "kind", None, f"unknown event kind {kind!r}; expected one "
                            "of task, user_input, memory, step, faults, end")

    def _start(self, task_id: str, fields: dict[str, Any]) -> None:
        if task_id in self.recorders:
            raise CaseError(task_id, "kind", None, "a task event must come before the task's records")
        unknown = set(fields) - {"task_id", "domain", "tools", "world", "memory_namespace"}
        if unknown:
            raise CaseError(task_id, sorted(unknown)[0], None, "unknown field of a task event")
        tools = [parse_model(ToolSpec, t, task_id, f"tools[{i}].")
                 for i, t in enumerate(fields.get("tools", []))]
        domain = fields.get("domain", "")
        if not isinstance(domain, str):
            raise CaseError(task_id, "domain", None, "expected a string")
        namespace = fields.get("memory_namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise CaseError(task_id, "memory_namespace", None, "expected a string")
        self.recorders[task_id] = Recorder(self.store, task_id, domain=domain, tools=tools,
                                           world=fields.get("world") or {},
                                           batch_size=self.batch_size,
                                           memory_namespace=namespace)

    def _recorder(self, task_id: str) -> Recorder:
        if task_id not in self.recorders:
            self.recorders[task_id] = Recorder(self.store, task_id, batch_size=self.batch_size)
        return self.recorders[task_id]


def decode_event(line: bytes, where: str) -> Any:
    try:
        return strict_json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"{where}: not UTF-8 (invalid byte at offset {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: invalid JSON at column {exc.colno}: {exc.msg}") from exc
    except strict_json.StrictJSONError as exc:
        raise InputError(f"{where}: {exc}") from exc
    except RecursionError as exc:
        raise InputError(f"{where}: JSON nested too deeply") from exc


def consume(stream: EventStream, lines: Iterable[bytes], name: str,
            on_event: Callable[[int], None] | None = None) -> None:
    """Decode and feed every non-blank line; a line refused stops the stream and gives every
    task's lock back (`EventStream.abort`). Ctrl-C is not a refusal: the caller finishes."""
    try:
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f"{name}:{lineno}"
            stream.feed(decode_event(line, where), where)
            if on_event is not None:
                on_event(lineno)
    except Exception:
        stream.abort()
        raise


def tail_lines(handle: Any, *, idle_timeout: float | None, done: Callable[[], bool],
               on_idle: Callable[[], None], poll: float = 0.2) -> Iterable[bytes]:
    """Lines of a growing file (like `tail -f`), from its start.

    Stops when `done()` says so (every task seen has ended) or after `idle_timeout` seconds
    without new data; `on_idle` runs whenever the reader catches up (the caller flushes
    there, so a quiet stream is never held in memory). A partial last line waits for its end.
    """
    import time

    partial = b""
    last_data = time.monotonic()
    while not done():
        chunk = handle.readline()
        if chunk:
            partial += chunk
            last_data = time.monotonic()
            if partial.endswith(b"\n"):
                yield partial
                partial = b""
            continue
        on_idle()
        if idle_timeout is not None and time.monotonic() - last_data >= idle_timeout:
            break
        time.sleep(poll)
    if partial.strip():
        yield partial
