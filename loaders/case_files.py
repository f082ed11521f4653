"""Case files: `.json` (one case) and `.jsonl` (one case per line), read strictly.

Everything is read and validated before anything is written: `load_cases` returns valid
cases or raises one `UserError` naming file, line, task, field and id. Bytes must be UTF-8;
a single case (a `.json` file or a `.jsonl` line) may not exceed PROVREPAIR_MAX_CASE_BYTES
(default 32 MiB), so a runaway line is refused with a clear message instead of exhausting
memory. Two cases with one task_id in the same call are refused (which one would win?).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from provrepair.loaders import strict_json
from provrepair.provenance.errors import CaseError, InputError
from provrepair.provenance.models import Case
from provrepair.provenance.validate import parse_case

DEFAULT_MAX_CASE_BYTES = 32 * 1024 * 1024


def max_case_bytes() -> int:
    raw = os.environ.get("PROVREPAIR_MAX_CASE_BYTES")
    return int(raw) if raw and raw.isdigit() else DEFAULT_MAX_CASE_BYTES


def load_cases(paths: list[Path]) -> list[Case]:
    """Read and validate every case of every file. A file that cannot be read as JSON stops
    at once (InputError); rule violations are collected over all cases, up to
    MAX_REPORTED_ERRORS, and raised together as one CaseError."""
    cases: list[Case] = []
    errors: list[CaseError] = []
    seen: dict[str, str] = {}
    for path in paths:
        for where, raw in read_json_records(path):
            try:
                case = parse_located(raw, where)
            except CaseError as exc:
                errors.append(exc)
                continue
            if case.task_id in seen:
                errors.append(CaseError(case.task_id, "task_id", case.task_id, "appears twice "
                                        f"in this ingest ({seen[case.task_id]} and {where})"))
            seen[case.task_id] = where
            cases.append(case)
    if errors:
        raise CaseError.combined(errors)
    return cases


def parse_located(raw: Any, where: str) -> Case:
    """`parse_case`, its errors naming the file (and line) the case came from."""
    try:
        return parse_case(raw)
    except CaseError as exc:
        located = [CaseError(e.task_id, e.field, e.offending_id, f"{e.problem} [{where}]")
                   for e in (exc, *exc.more)]
        raise CaseError.combined(located) from exc


def read_json_records(path: Path) -> Iterator[tuple[str, Any]]:
    """(location, parsed JSON) for each case in a .json or .jsonl file."""
    if path.is_dir():
        raise InputError(f"{path}: is a directory; pass case files (.json, .jsonl)")
    if path.suffix not in (".json", ".jsonl"):
        raise InputError(f"{path}: unknown file type {path.suffix!r}; expected .json or .jsonl")
    try:
        with path.open("rb") as handle:
            if path.suffix == ".json":
                yield str(path), _decode(_read_limited(handle, str(path)), str(path))
            else:
                yield from _jsonl_records(handle, str(path))
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def _jsonl_records(handle: BinaryIO, name: str) -> Iterator[tuple[str, Any]]:
    count = 0
    for lineno, line in enumerate(iter_lines(handle, name), 1):
        if line.strip():
            count += 1
            where = f"{name}:{lineno}"
            yield where, _decode(line, where)
    if count == 0:
        raise InputError(f"{name}: is empty; expected one case per line")


def iter_lines(handle: BinaryIO, name: str) -> Iterator[bytes]:
    """Lines of a binary stream, each at most max_case_bytes (checked before buffering it)."""
    limit = max_case_bytes()
    lineno = 0
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        lineno += 1
        if len(line) > limit and not line.endswith(b"\n"):
            raise InputError(f"{name}:{lineno}: line is longer than {limit} bytes "
                             "(PROVREPAIR_MAX_CASE_BYTES); refused")
        yield line


def _read_limited(handle: BinaryIO, name: str) -> bytes:
    limit = max_case_bytes()
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"{name}: larger than {limit} bytes (PROVREPAIR_MAX_CASE_BYTES); refused")
    return data


def _decode(data: bytes, where: str) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{where}: not UTF-8 (invalid byte 0x{data[exc.start]:02x} "
                         f"at offset {exc.start})") from exc
    if not text.strip():
        raise InputError(f"{where}: is empty; expected a JSON case")
    try:
        return strict_json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: invalid JSON at line {exc.lineno} column {exc.colno}: "
                         f"{exc.msg}") from exc
    except strict_json.StrictJSONError as exc:
        raise InputError(f"{where}: {exc}") from exc
    except RecursionError as exc:
        raise InputError(f"{where}: JSON nested too deeply") from exc
