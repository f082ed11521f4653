"""`<out>/results.jsonl`: one JSON line per case × method, appended as each pair finishes
(flushed and fsynced), so a killed run loses at most the pair in progress. A rerun skips
the pairs already finished for the same case content, reasoner and model ("not run"
included: the same configuration cannot run it either); "error" lines are retried. A torn
last line (a kill mid-write) is ignored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from provrepair.provenance.state.runs import ReportStatus

# every report status a finished pair can carry, and the benchmark's own "not_run"
FINISHED = frozenset({*ReportStatus, "not_run"}) - {ReportStatus.DRY_RUN}
RESULTS = "results.jsonl"


def pair_key(line: dict[str, Any]) -> tuple[str, str, str, str, str]:
    return (line["case"], line["digest"], line["method"], line["reasoner"],
            str(line.get("model")))


def read_lines(out: Path) -> list[dict[str, Any]]:
    path = out / RESULTS
    if not path.exists():
        return []
    lines = []
    for text in path.read_text(encoding="utf-8").splitlines():
        try:
            line = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(line, dict) and "case" in line and "method" in line:
            lines.append(line)
    return lines


def finished(lines: Iterable[dict[str, Any]]) -> set[tuple[str, str, str, str, str]]:
    return {pair_key(line) for line in lines if line.get("status") in FINISHED}


def latest(lines: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last line of each pair (a retried pair's newest result wins)."""
    by_key = {pair_key(line): line for line in lines}
    return list(by_key.values())


def append_line(out: Path, line: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    path = out / RESULTS
    torn = _ends_torn(path)
    with path.open("a", encoding="utf-8") as handle:
        if torn:
            handle.write("\n")  # end a line torn by a kill: it stays unreadable, alone
        handle.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _ends_torn(path: Path) -> bool:
    if not path.exists() or path.stat().st_size == 0:
        return False
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) != b"\n"
