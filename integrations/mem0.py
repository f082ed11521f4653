"""`RecordingMemory`: mem0's `Memory` (or `AsyncMemory`) recording what the agent reads and
writes.

    memory = RecordingMemory(Memory.from_config(config), tracer)
    memory.add("prefers aisle seats", user_id="alice")          # as the agent always did

The methods the agent calls are mem0's own, with mem0's arguments and results; these are
recorded to the sink (integrations/sink.py: provrepair's `Recorder`, or OpenTelemetry),
everything else (`history`, `reset`, `delete_all`…) goes through unrecorded:

| the agent calls | recorded as |
|---|---|
| `search`, `get_all`, `get` (found) | `search_memory` with the records returned (`query`) |
| `add` | per result: `create_memory` (ADD), `update_memory` (UPDATE), `delete_memory` (DELETE) |
| `add` inferring (mem0's default) | first `search_memory` of the scope's records, below |
| `update(id, text=...)` | `update_memory` of the record with its new text |
| `delete(id)` | `delete_memory` of the record |

**Ids and the namespace.** A record's id is mem0's (the UUID it assigned); the agent memory is
the scope the call names (`user_id`, `agent_id`, `run_id`, top-level for `add`, in `filters`
for `search` and `get_all`), recorded as `gen_ai.memory.store.id` in the form
`user_id=alice/agent_id=shop` that `provrepair apply --to mem0:CONFIG --namespace` takes
(repair/appliers/mem0.py). A call by id alone (`get`, `update`, `delete`) names the scope given
as `scope=`, if any.

With a Recorder the task has one agent memory: a call naming another scope is refused before
mem0 acts (CaseError). `last_step_id` and `evidence(ids)` are the LangGraph wrapper's
(integrations/langgraph.py).

**An inferring `add` reads the memory.** mem0 (2.x) puts the scope's existing records most
like the messages, and the session's recent messages, into the prompt its model extracts the
new records from; which ones is decided inside mem0. So before such an `add` the wrapper reads
every record of the scope (`get_all`, up to `SCOPE_READ_LIMIT`) and records that read: the
records the `add` writes depend on it (with `evidence(ids)`, on those ids and the records read),
an over-approximation that never misses a record the extraction saw (the session's messages
are what earlier `add`s were given: their records are the scope's).

A metadata-only `update` changes no content: not recorded. A call that raises is recorded as a
failed write (reads: nothing; a failed `add` has no id to name: nothing, and a record it left
anyway enters with the first read that returns it), then raised as it was.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from provrepair.integrations.open_sink import open_sink
from provrepair.integrations.sink import Recording
from provrepair.repair.appliers.mem0 import ENTITY_IDS, parse_scope, scope_name

EVENTS = {"ADD": "create_memory", "UPDATE": "update_memory", "DELETE": "delete_memory"}
SCOPE_READ_LIMIT = 100_000  # the records of a scope an inferring add is recorded as reading


class RecordingMemory(Recording):
    """The agent's mem0 memory, recorded (module docstring). For an `AsyncMemory` the same
    methods are coroutines, as mem0's are."""

    def __init__(self, memory: Any, sink: Any = None, *, scope: str | None = None,
                 conversation_id: str | None = None):
        """`sink`: provrepair's Recorder (its task is the conversation), the agent's Tracer
        or TracerProvider (None: the global one), or a SpanExporter with `conversation_id`
        (integrations/sink.py). `scope`: the agent memory of calls by id alone,
        `user_id=alice` (mem0's scope, as apply takes it)."""
        self.memory = memory
        self.scope = scope_name(parse_scope(scope)) if scope is not None else None
        self.sink = open_sink(sink, conversation_id=conversation_id)
        self.sink.check_namespace(self.scope)
        self._async = inspect.iscoroutinefunction(getattr(memory, "add", None))

    @property
    def unrecorded(self) -> Any:
        """The agent's own memory (an applier's reads and writes are not the agent's)."""
        return self.memory

    def __getattr__(self, name: str) -> Any:  # history, reset, delete_all, config, …
        if name == "memory":
            raise AttributeError(name)
        return getattr(self.memory, name)

    def add(self, messages: Any, **kwargs: Any) -> Any:
        self.sink.check_namespace(self._namespace(kwargs))
        scope = {k: kwargs[k] for k in ENTITY_IDS if kwargs.get(k)}
        if not kwargs.get("infer", True) or not scope:  # no model reads the memory
            return self._call("add", (messages,), kwargs, self._record_add, write=True)
        read = {"filters": scope, "top_k": SCOPE_READ_LIMIT}
        if self._async:
            return self._aadd_inferred(messages, kwargs, read)
        found = self._call("get_all", (), read, self._record_read, write=False)
        with self._depending_on(found):
            return self._call("add", (messages,), kwargs, self._record_add, write=True)

    async def _aadd_inferred(self, messages: Any, kwargs: dict[str, Any],
                             read: dict[str, Any]) -> Any:
        found = await self._call("get_all", (), read, self._record_read, write=False)
        with self._depending_on(found):
            return await self._call("add", (messages,), kwargs, self._record_add, write=True)

    @contextmanager
    def _depending_on(self, found: Any) -> Iterator[None]:
        """The writes inside depend on the read that returned `found`: by default they do
        (the latest read is part of what a write depends on); inside the agent's
        `evidence(ids)`, the records read are added to those ids."""
        if self.sink.evidence_ids is None:
            yield
            return
        with self.sink.evidence([*self.sink.evidence_ids,
                                 *(str(r["id"]) for r in _results(found))]):
            yield

    def search(self, query: str, **kwargs: Any) -> Any:
        self.sink.check_namespace(self._namespace(kwargs.get("filters")))
        return self._call("search", (query,), kwargs, self._record_read, write=False)

    def get_all(self, **kwargs: Any) -> Any:
        self.sink.check_namespace(self._namespace(kwargs.get("filters")))
        return self._call("get_all", (), kwargs, self._record_read, write=False)

    def get(self, memory_id: str) -> Any:
        return self._call("get", (memory_id,), {}, self._record_get, write=False)

    def update(self, memory_id: str, *args: Any, **kwargs: Any) -> Any:
        return self._call("update", (memory_id, *args), kwargs, self._record_update, write=True)

    def delete(self, memory_id: str) -> Any:
        return self._call("delete", (memory_id,), {}, self._record_delete, write=True)

    # -- calling mem0 -----------------------------------------------------------------------

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
              record: Any, *, write: bool) -> Any:
        method = getattr(self.memory, name)
        if self._async:
            return self._acall(method, args, kwargs, record, write)
        with self._recording(record, args, kwargs, write) as outcome:
            outcome["result"] = method(*args, **kwargs)
        return outcome["result"]

    async def _acall(self, method: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                     record: Any, write: bool) -> Any:
        with self._recording(record, args, kwargs, write) as outcome:
            outcome["result"] = await method(*args, **kwargs)
        return outcome["result"]

    @contextmanager
    def _recording(self, record: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                   write: bool) -> Iterator[dict[str, Any]]:
        """Record the call the block makes once it returned (its result in the dict), or a
        write that raised, as failed."""
        outcome: dict[str, Any] = {}
        try:
            yield outcome
        except Exception as exc:
            if write:
                record(args, kwargs, None, exc)
            raise
        record(args, kwargs, outcome["result"], None)

    # -- what each call records -------------------------------------------------------------

    def _namespace(self, scope: Mapping[str, Any] | None) -> str | None:
        named = scope_name({k: v for k, v in (scope or {}).items() if k in ENTITY_IDS})
        return named or self.scope

    def _record_add(self, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any,
                    error: Exception | None) -> None:
        if error is not None:  # mem0 had not numbered a record yet: no id to name
            return
        namespace = self._namespace(kwargs)
        for event in _results(result):
            operation = EVENTS.get(str(event.get("event", "ADD")).upper())
            if operation is None:  # NONE: mem0 changed nothing
                continue
            record = {"id": str(event["id"]), "content": str(event.get("memory", ""))}
            if operation == "delete_memory":
                self.sink.emit(operation, record_id=record["id"], namespace=namespace)
            else:
                self.sink.emit(operation, records=[record], namespace=namespace)

    def _record_read(self, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any,
                     error: Exception | None) -> None:
        records = [{"id": str(r["id"]), "content": str(r.get("memory", ""))}
                   for r in _results(result)]
        self.sink.search(records, query=args[0] if args else None,
                          namespace=self._namespace(kwargs.get("filters")))

    def _record_get(self, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any,
                    error: Exception | None) -> None:
        if result:
            self.sink.search([{"id": str(result["id"]), "content": str(result.get("memory", ""))}],
                              namespace=self._namespace(result))

    def _record_update(self, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any,
                       error: Exception | None) -> None:
        text = kwargs.get("text", kwargs.get("data", args[1] if len(args) > 1 else None))
        if text is None:
            return  # metadata only: the record's content is unchanged
        self.sink.emit("update_memory", records=[{"id": str(args[0]), "content": str(text)}],
                        namespace=self.scope, error=error)

    def _record_delete(self, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any,
                       error: Exception | None) -> None:
        self.sink.emit("delete_memory", record_id=str(args[0]), namespace=self.scope,
                        error=error)


def _results(result: Any) -> list[dict[str, Any]]:
    """mem0's `{"results": [...]}` (or a bare list, as older versions return)."""
    rows = result.get("results", []) if isinstance(result, dict) else result or []
    return [r for r in rows if isinstance(r, dict) and r.get("id") is not None]
