"""mem0's memory (`mem0.Memory`, the open-source library; needs the `[mem0]` extra).

**The agent's memory is a mem0 scope**: `user_id=alice`, or several of mem0's entity ids,
`user_id=alice/agent_id=shop/run_id=r1` (`--namespace`; `scope_name` / `parse_scope`). A
record belongs to it when its ids match every one the scope names, as mem0's own
`search(filters=...)` and `get_all(filters=...)` select them; a record of another scope is not
the agent's (absent here).

**Ids.** mem0 gives every record its own id (a UUID) when it is added: the ids the agent
recorded (provrepair.integrations.RecordingMemory records mem0's ids) are those. A record the
patch adds (a regenerated `m_n007`) or restores gets a new mem0 id; the patch's id is kept in
its metadata (`provrepair_id`): the id map. `get` finds a record by its mem0 id or by that
metadata, so a re-run finds what an earlier run wrote instead of writing it again.

**Quarantine is a move.** mem0 cannot change a record's scope, so a quarantined record is
copied into the quarantine scope (each of the scope's ids prefixed `provrepair-quarantine:`,
outside every search the agent makes with its own ids), its metadata naming the record, and
then deleted from the agent's scope. Restore is the move back (a new mem0 id, mapped).

**Writes**: `add(text, infer=False)` (stored as given: no LLM call, nothing merged),
`update(id, text=...)` (keeps the id; mem0 embeds the new text, so its search finds it),
`delete(id)`. They are `Memory`'s (sync) calls: for an agent on `AsyncMemory`, apply with a
`Memory` of the same config (`--to mem0:CONFIG`), the same vector store and history.

**mem0 has no transactions.** What stands in for one: the check and every write of an apply
run under an exclusive lock file (one per vector store and scope, in the temporary directory:
appliers on this machine queue), and every write is idempotent as the patch's states define
it (repair/appliers/__init__.py `_state`): an apply killed between two writes (kill -9, a
crash of the vector store) leaves some operations done, and the next apply finds those in
effect and carries out the rest (tests/integration/test_mem0.py kills one and re-runs). The
check cannot exclude a write by the agent itself between the check and the writes (mem0 has
no lock the agent takes): apply while the agent is not writing to that scope.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import tempfile
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from provrepair.provenance.checkpoints import checkpoint
from provrepair.provenance.errors import ConfigError, TargetMismatch

ENTITY_IDS = ("user_id", "agent_id", "run_id")  # mem0's scope keys, in the order named
QUARANTINE_PREFIX = "provrepair-quarantine:"
MAP_KEY = "provrepair_id"  # the patch's id of a record mem0 numbered itself


def require_mem0() -> None:
    try:
        import mem0  # noqa: F401
    except ImportError as exc:
        raise ConfigError("applying to mem0 needs the mem0 extra: "
                          "pip install 'provrepair[mem0]'") from exc


def scope_name(scope: Mapping[str, Any]) -> str:
    """The scope as a task's `memory_namespace` names it: `user_id=alice/agent_id=shop`."""
    return "/".join(f"{key}={scope[key]}" for key in ENTITY_IDS if scope.get(key) is not None)


def parse_scope(text: str) -> dict[str, str]:
    """`user_id=alice/agent_id=shop` → {"user_id": "alice", "agent_id": "shop"}; one
    ConfigError line for anything else."""
    scope: dict[str, str] = {}
    for part in text.split("/"):
        key, eq, value = part.partition("=")
        if not eq or key not in ENTITY_IDS or key in scope or not value.strip() \
                or any(c.isspace() for c in value):
            raise ConfigError(f"--namespace {text!r}: a mem0 scope is user_id=ID, agent_id=ID "
                              "and/or run_id=ID joined by '/' (each once, ids without spaces)")
        scope[key] = value
    return scope


class Mem0Memory:
    """The agent's mem0 `Memory` as a MemoryStore (see the module docstring)."""

    def __init__(self, memory: Any, scope: str | Mapping[str, str], *,
                 owned: IO[str] | None = None):
        """`scope`: `user_id=alice` or {"user_id": "alice"}. `owned`: the lock `mem0_store`
        took before it opened `memory` (held until `close()`, which closes `memory` too)."""
        # behind a recording wrapper (provrepair.integrations): the agent's own memory
        self.memory, self._owned = getattr(memory, "unrecorded", memory), owned
        self.scope = parse_scope(scope if isinstance(scope, str) else scope_name(scope))
        self.hidden = {k: QUARANTINE_PREFIX + v for k, v in self.scope.items()}

    @property
    def memory_namespace(self) -> str:
        return scope_name(self.scope)

    def get(self, memory_id: str) -> str | None:
        found = self._find(memory_id, self.scope)
        return found[0]["memory"] if found else None

    def quarantined(self, memory_id: str) -> str | None:
        found = self._find(memory_id, self.hidden)
        return found[0]["memory"] if found else None

    def put(self, memory_id: str, content: str) -> None:
        active = self._find(memory_id, self.scope)
        hidden = self._find(memory_id, self.hidden)
        if active:
            self.memory.update(active[0]["id"], text=content)
        else:  # a restore keeps the quarantined copy's metadata (the agent may filter on it)
            self._add(content, self.scope, memory_id,
                      (hidden[0].get("metadata") or {}) if hidden else {})
        for record in [*active[1:], *hidden]:
            self.memory.delete(record["id"])

    def remove(self, memory_id: str) -> None:
        for record in [*self._find(memory_id, self.scope), *self._find(memory_id, self.hidden)]:
            self.memory.delete(record["id"])

    def quarantine(self, memory_id: str) -> None:
        active = self._find(memory_id, self.scope)
        if not active:
            return
        if not self._find(memory_id, self.hidden):  # a run killed after the copy made it
            self._add(active[0]["memory"], self.hidden, memory_id,
                      active[0].get("metadata") or {})
        checkpoint("mem0_quarantine_copied")  # the test of a kill between the two writes
        for record in active:
            self.memory.delete(record["id"])

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Not a transaction (mem0 has none): the lock that makes appliers queue; each write is
        idempotent, so a re-run after a crash converges (module docstring)."""
        if self._owned is not None:  # held since the store was opened
            yield
            return
        with locked(lock_path(self.memory.config.vector_store, self.scope)):
            yield

    def close(self) -> None:
        if self._owned is None:
            return
        self.memory.close()
        client: Any = getattr(getattr(self.memory, "vector_store", None), "client", None)
        if client is not None and hasattr(client, "close"):  # a local Qdrant holds its
            client.close()                                   # directory until closed
        self._owned.close()  # releases the lock
        self._owned = None

    def _add(self, content: str, scope: Mapping[str, str], memory_id: str,
             metadata: Mapping[str, Any]) -> None:
        self.memory.add(content, **scope, metadata={**metadata, MAP_KEY: memory_id},
                        infer=False)

    def _find(self, memory_id: str, scope: Mapping[str, str]) -> list[dict[str, Any]]:
        """The records of `scope` that are `memory_id`: by mem0's id, or by the id map."""
        found: dict[str, dict[str, Any]] = {}
        if _is_uuid(memory_id):
            record = self.memory.get(memory_id)
            if record is not None and all(record.get(k) == v for k, v in scope.items()):
                found[record["id"]] = record
        mapped = self.memory.get_all(filters={**scope, MAP_KEY: memory_id})
        for record in mapped.get("results", []):
            found.setdefault(record["id"], record)
        return sorted(found.values(), key=lambda r: (r["id"] != memory_id, r["id"]))


def lock_path(vector_store: Any, scope: Mapping[str, str]) -> Path:
    """The lock of one vector store (mem0's `config.vector_store`) and scope."""
    config = getattr(vector_store, "config", vector_store)
    where = config.model_dump(mode="json") if hasattr(config, "model_dump") else repr(config)
    key = json.dumps([getattr(vector_store, "provider", ""), where, dict(scope)],
                     sort_keys=True, default=str)
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    return Path(tempfile.gettempdir()) / f"provrepair-mem0-{digest}.lock"


@contextmanager
def locked(path: Path) -> Iterator[IO[str]]:
    handle = lock(path)
    try:
        yield handle
    finally:
        handle.close()  # releases the lock


def lock(path: Path) -> IO[str]:
    """An exclusive lock on `path`, waited for; held until the returned file is closed (or
    the process dies: the kernel releases it)."""
    handle = open(path, "a+")  # noqa: SIM115
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def mem0_store(config_path: str, namespace: str) -> Mem0Memory:
    """The agent's mem0 `Memory` from its config (`Memory.from_config`'s dict, as a JSON
    file). A vector store on a local `path` must exist there: nothing is created."""
    scope = parse_scope(namespace)
    try:
        config = json.loads(Path(config_path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"mem0:{config_path}: cannot read mem0's config as JSON "
                          f"({exc})") from exc
    if not isinstance(config, dict):
        raise ConfigError(f"mem0:{config_path}: expected mem0's config (a JSON object)")
    store_config = (config.get("vector_store") or {}).get("config") \
        if isinstance(config.get("vector_store"), dict) else None
    local = store_config.get("path") if isinstance(store_config, dict) else None
    if local is not None and not Path(local).exists():
        raise TargetMismatch(f"mem0:{config_path}: its vector store path {local} does not "
                             "exist: give the agent's mem0 config (nothing is created); "
                             "nothing written")
    require_mem0()
    from mem0 import Memory
    from mem0.configs.base import MemoryConfig

    logging.getLogger("mem0").setLevel(logging.ERROR)  # its notices are not ours to print
    try:
        parsed = MemoryConfig(**config)
    except (ValueError, TypeError) as exc:  # pydantic's
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"mem0:{config_path}: not a mem0 config ({reason})") from exc
    # the lock before the store is opened: a local vector store (Qdrant on a path) admits one
    # process at a time, so a second applier waits here instead of failing to open it
    held = lock(lock_path(parsed.vector_store, scope))
    try:
        memory = Memory(parsed)
    except Exception as exc:  # a store in use by the agent, a vector store
        # server not answering (qdrant's own exceptions), a bad setting: mem0 names none of
        # them, and whichever it is, the memory cannot be opened
        held.close()
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TargetMismatch(f"mem0:{config_path}: cannot open the agent's memory ({reason}); "
                             "nothing written") from exc
    return Mem0Memory(memory, scope, owned=held)
