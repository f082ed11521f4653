"""A plain JSONL memory file: one record per line, `{"id", "content", "status"}` (the content
under another key with `value_key`); the agent retrieves the `active` ones. Quarantine sets
`"status": "quarantined"`. Unknown fields of a record are kept.

The file must exist (a mistyped path is refused, never created). A transaction holds an
exclusive `fcntl` lock on the file, reads it once, and writes it back once through a temporary
file in the same directory (fsync, `os.replace`, fsync of the directory): a crash leaves the
old or the new file, never half, and two appliers (or an agent that locks the file the same
way) never interleave. `os.replace` gives the path a new inode, so a process that waited for
the lock on the old one opens the path again before it reads. A path that is a symlink is
resolved first: the file the agent reads through the link is the one locked and replaced (the
link stays a link).
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from provrepair.provenance.errors import InputError, TargetMismatch
from provrepair.provenance.vocab import MemoryStatus

# A record's `status` in the file, as in the case format (`status` absent: active).
ACTIVE, QUARANTINED = MemoryStatus.ACTIVE.value, MemoryStatus.QUARANTINED.value


class JsonlMemory:
    def __init__(self, path: str | Path, *, value_key: str = "content", create: bool = False):
        """`create`: start an empty memory file at `path` if there is none (an agent's new
        store); an applier never does (a mistyped path must not read as an empty memory)."""
        self.given, self.value_key = Path(path), value_key
        if create and not self.given.exists():
            self.given.touch()
        self.path = self.given.resolve()  # through a symlink: the file the agent reads
        if not self.path.is_file():
            why = "is not a file" if self.path.exists() else "does not exist"
            raise TargetMismatch(f"jsonl:{self.given} {why}: give the agent's memory file "
                                 "(nothing is created); nothing written")
        self._records: dict[str, dict[str, Any]] | None = None  # inside a transaction
        self._dirty = False

    def get(self, memory_id: str) -> str | None:
        return self._content(memory_id, ACTIVE)

    def quarantined(self, memory_id: str) -> str | None:
        return self._content(memory_id, QUARANTINED)

    def put(self, memory_id: str, content: str) -> None:
        with self.transaction():
            records = self._held()
            records[memory_id] = {**records.get(memory_id, {"id": memory_id}),
                                  self.value_key: content, "status": ACTIVE}
            self._dirty = True

    def remove(self, memory_id: str) -> None:
        with self.transaction():
            self._dirty |= self._held().pop(memory_id, None) is not None

    def quarantine(self, memory_id: str) -> None:
        with self.transaction():
            record = self._held().get(memory_id)
            if record is not None:
                record["status"] = QUARANTINED
                self._dirty = True

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Lock, read, and on success write back once; nested calls join the outer one."""
        if self._records is not None:
            yield
            return
        with self._locked() as handle:
            self._records, self._dirty = _parse(self.path, handle.read(), self.value_key), False
            try:
                yield
                if self._dirty:
                    self._replace(self._records)
            finally:
                self._records = None

    def close(self) -> None:
        """Nothing held between transactions."""

    def _content(self, memory_id: str, status: str) -> str | None:
        with self.transaction():
            record = self._held().get(memory_id)
        if record is None or record.get("status", ACTIVE) != status:
            return None
        value = record.get(self.value_key)
        return value if isinstance(value, str) else None

    def _held(self) -> dict[str, dict[str, Any]]:
        assert self._records is not None, "inside a transaction"
        return self._records

    @contextmanager
    def _locked(self) -> Iterator[TextIO]:
        while True:
            try:
                handle = open(self.path, "r+", encoding="utf-8")  # noqa: SIM115
            except OSError as exc:
                raise TargetMismatch(f"jsonl:{self.given}: cannot open for writing "
                                     f"({exc.strerror or exc}); nothing written") from exc
            try:
                fcntl.flock(handle, fcntl.LOCK_EX)
                if os.fstat(handle.fileno()).st_ino == os.stat(self.path).st_ino:
                    break  # still the file at the path (not replaced while we waited)
            except FileNotFoundError:
                pass
            handle.close()
        try:
            yield handle
        finally:
            handle.close()  # releases the lock

    def _replace(self, records: dict[str, dict[str, Any]]) -> None:
        directory = self.path.parent
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=directory)
        except OSError as exc:
            raise TargetMismatch(f"jsonl:{self.given}: cannot write in {directory} "
                                 f"({exc.strerror or exc}); nothing written") from exc
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records.values())
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, os.stat(self.path).st_mode & 0o7777)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _parse(path: Path, text: str, value_key: str) -> dict[str, dict[str, Any]]:
    records: dict[str, dict[str, Any]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                record = json.loads(line)
                records[str(record["id"])] = record
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise InputError(f"{path}:{n}: not a memory record "
                                 f"({{\"id\", \"{value_key}\", \"status\"}})") from exc
    return records
