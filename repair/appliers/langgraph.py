"""LangGraph's long-term memory (`langgraph.store.base.BaseStore`): records are items
`(namespace, key=memory id, value={"content": ...})`; quarantine moves an item to the
namespace ("provrepair_quarantine", *namespace): outside the agent's namespace prefix, so its
searches (which match namespace prefixes) never return it.
Works with any BaseStore (InMemoryStore, SqliteStore, PostgresStore); `sqlite_store` opens
the SQLite one from `langgraph-checkpoint-sqlite`. Needs the `[langgraph]` extra."""

from __future__ import annotations

from typing import Any

from provrepair.provenance.errors import ConfigError

QUARANTINE = "provrepair_quarantine"


def require_langgraph() -> None:
    try:
        import langgraph.store.base  # noqa: F401
    except ImportError as exc:
        raise ConfigError("applying to LangGraph needs the langgraph extra: "
                          "pip install 'provrepair[langgraph]'") from exc


class LangGraphMemory:
    def __init__(self, store: Any, namespace: tuple[str, ...] = ("memories",),
                 value_key: str = "content"):
        self.store, self.namespace, self.value_key = store, tuple(namespace), value_key
        self.hidden = (QUARANTINE, *self.namespace)

    def get(self, memory_id: str) -> str | None:
        return self._content(self.store.get(self.namespace, memory_id))

    def quarantined(self, memory_id: str) -> str | None:
        return self._content(self.store.get(self.hidden, memory_id))

    def put(self, memory_id: str, content: str) -> None:
        old = self.store.get(self.namespace, memory_id)
        value = {**(old.value if old else {}), self.value_key: content}
        self.store.put(self.namespace, memory_id, value)
        self.store.delete(self.hidden, memory_id)

    def remove(self, memory_id: str) -> None:
        self.store.delete(self.namespace, memory_id)
        self.store.delete(self.hidden, memory_id)

    def quarantine(self, memory_id: str) -> None:
        item = self.store.get(self.namespace, memory_id)
        if item is not None:
            self.store.put(self.hidden, memory_id, item.value)
            self.store.delete(self.namespace, memory_id)

    def _content(self, item: Any) -> str | None:
        if item is None:
            return None
        value = item.value.get(self.value_key)
        return value if isinstance(value, str) else None


def sqlite_store(path: str, namespace: tuple[str, ...]) -> LangGraphMemory:
    """A LangGraph SqliteStore on the file at `path` (created and set up if needed)."""
    require_langgraph()
    import sqlite3

    from langgraph.store.sqlite import SqliteStore

    store = SqliteStore(sqlite3.connect(path, check_same_thread=False, isolation_level=None))
    store.setup()
    return LangGraphMemory(store, namespace)
