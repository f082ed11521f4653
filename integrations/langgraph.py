"""`RecordingStore`: a LangGraph `BaseStore` that records what the agent reads and writes.

    store = RecordingStore(SqliteStore(conn, index=...), tracer, namespace=("memories", "u42"))
    # give `store` to the agent (graph.compile(store=store), langmem's tools and managers…)

It is a `BaseStore` whose `batch`/`abatch` run the agent's store's and then record each
operation to the sink (integrations/sink.py: provrepair's `Recorder`, or OpenTelemetry), so
every method built on them (get, search, put, delete, list_namespaces, and their async forms)
goes through unchanged, sync and async:

| the agent calls | recorded as (a span; with a Recorder, the step integrations/recorded.py makes) |
|---|---|
| `get` (found), `search` | `search_memory` with the items returned, in order (`query` as the query text) |
| `put` | `upsert_memory` of the item (a key the run has not seen is a new record, else a new version of it) |
| `delete` (`put` of None) | `delete_memory` of the key |
| `list_namespaces`, a `get` that found nothing | nothing (no record read) |

`last_step_id` is the step of the latest operation (with a Recorder: for the agent's own steps
to cite); the writes inside `with store.evidence(ids):` depend on exactly those ids.

**Ids and the namespace.** A record's id is its key, in the agent memory `namespace` (recorded
as `gen_ai.memory.store.id`, the parts joined by '/': what `provrepair apply --namespace`
takes); an item of another namespace (a search over a shorter prefix) is recorded as
`<namespace>/<key>`, never confused with a key of this one. A record's content is the text
under `value_key`, or the JSON of a structure there (repair/appliers/langgraph.py
`value_text`), or the JSON of the whole value when it has no such field.

A batch that raises records its writes as failed (a failed write is not a record; a later read
that still returns it says what the store holds) and no reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from provrepair.integrations.open_sink import open_sink
from provrepair.integrations.sink import Recording
from provrepair.repair.appliers.langgraph import check_namespace, require_langgraph, value_text

require_langgraph()

from langgraph.store.base import (  # noqa: E402  (after the extra is checked)
    BaseStore,
    GetOp,
    Item,
    Op,
    PutOp,
    Result,
    SearchOp,
)


class RecordingStore(Recording, BaseStore):
    """The agent's store, recorded (module docstring)."""

    def __init__(self, store: BaseStore, sink: Any = None, *,
                 namespace: tuple[str, ...] = ("memories",), value_key: str = "content",
                 conversation_id: str | None = None):
        """`sink`: provrepair's Recorder (its task is the conversation), the agent's Tracer
        or TracerProvider (None: the global one), or a SpanExporter with `conversation_id`
        (integrations/sink.py)."""
        self.store, self.value_key = store, value_key
        self.namespace = check_namespace(namespace)
        self.sink = open_sink(sink, conversation_id=conversation_id)
        self.sink.check_namespace("/".join(self.namespace))

    @property
    def unrecorded(self) -> BaseStore:
        """The agent's own store (an applier's reads and writes are not the agent's)."""
        return self.store

    @property
    def supports_ttl(self) -> bool:  # type: ignore[override]
        return bool(self.store.supports_ttl)

    @property
    def ttl_config(self) -> Any:  # type: ignore[override]
        return self.store.ttl_config

    def __getattr__(self, name: str) -> Any:  # setup(), conn, … of the agent's store
        if name == "store":  # not set yet (a copy being built)
            raise AttributeError(name)
        return getattr(self.store, name)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        try:
            results = self.store.batch(ops)
        except Exception as exc:
            self._record_failed(ops, exc)
            raise
        self._record(ops, results)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        try:
            results = await self.store.abatch(ops)
        except Exception as exc:
            self._record_failed(ops, exc)
            raise
        self._record(ops, results)
        return results

    def _record(self, ops: list[Op], results: list[Result]) -> None:
        name = "/".join(self.namespace)
        for op, result in zip(ops, results, strict=True):
            if isinstance(op, SearchOp):
                items = [i for i in result or [] if isinstance(i, Item)]  # type: ignore[union-attr]
                self.sink.search([self._record_of(i.namespace, i.key, i.value) for i in items],
                                  query=op.query, namespace=name)
            elif isinstance(op, GetOp) and isinstance(result, Item):
                self.sink.search([self._record_of(result.namespace, result.key, result.value)],
                                  namespace=name)
            elif isinstance(op, PutOp):
                self._record_put(op, name, None)

    def _record_failed(self, ops: list[Op], error: Exception) -> None:
        for op in ops:
            if isinstance(op, PutOp):
                self._record_put(op, "/".join(self.namespace), error)

    def _record_put(self, op: PutOp, name: str, error: Exception | None) -> None:
        if op.value is None:
            self.sink.emit("delete_memory", record_id=self._id(op.namespace, op.key),
                            namespace=name, error=error)
        else:
            self.sink.emit("upsert_memory", records=[self._record_of(op.namespace, op.key,
                                                                      op.value)],
                            namespace=name, error=error)

    def _id(self, namespace: tuple[str, ...], key: str) -> str:
        return key if tuple(namespace) == self.namespace else "/".join((*namespace, key))

    def _record_of(self, namespace: tuple[str, ...], key: str,
                   value: Mapping[str, Any]) -> dict[str, str]:
        text = value_text(dict(value), self.value_key)
        if text is None:
            text = json.dumps(value, sort_keys=True, ensure_ascii=False)
        return {"id": self._id(namespace, key), "content": text}
