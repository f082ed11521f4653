"""A plain JSONL memory file: one record per line, `{"id", "content", "status"}`; the agent
retrieves the `active` ones. Quarantine sets `"status": "quarantined"`. The file is rewritten
through a temporary file and a rename, so a crash leaves the old or the new file, never half."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from provrepair.provenance.errors import InputError


class JsonlMemory:
    def __init__(self, path: str | Path):
        self.path = Path(path)

    def get(self, memory_id: str) -> str | None:
        record = self._records().get(memory_id)
        return record["content"] if record and record.get("status", "active") == "active" else None

    def quarantined(self, memory_id: str) -> str | None:
        record = self._records().get(memory_id)
        return record["content"] if record and record.get("status") == "quarantined" else None

    def put(self, memory_id: str, content: str) -> None:
        records = self._records()
        records[memory_id] = {**records.get(memory_id, {}), "id": memory_id,
                              "content": content, "status": "active"}
        self._write(records)

    def remove(self, memory_id: str) -> None:
        records = self._records()
        records.pop(memory_id, None)
        self._write(records)

    def quarantine(self, memory_id: str) -> None:
        records = self._records()
        records[memory_id]["status"] = "quarantined"
        self._write(records)

    def _records(self) -> dict[str, dict[str, Any]]:
        if not self.path.exists():
            return {}
        records: dict[str, dict[str, Any]] = {}
        for n, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    record = json.loads(line)
                    records[str(record["id"])] = record
                except (json.JSONDecodeError, KeyError, TypeError) as exc:
                    raise InputError(f"{self.path}:{n}: not a memory record "
                                     "({\"id\", \"content\", \"status\"})") from exc
        return records

    def _write(self, records: dict[str, dict[str, Any]]) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                               for r in records.values()), encoding="utf-8")
        os.replace(tmp, self.path)
