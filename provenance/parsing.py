"""Raw JSON data → pydantic models, with errors mapped to `CaseError` (task, field, id).

Also the checks a value must pass before it can travel to either engine: no NUL characters
or unpaired surrogates (the embedded engine's protocol ends a query at NUL; neither can be
UTF-8 encoded) and no nesting deeper than MAX_DEPTH.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from provrepair.provenance.errors import MAX_REPORTED_ERRORS, CaseError

ID_FIELDS = ("input_id", "memory_id", "step_id")
M = TypeVar("M", bound=BaseModel)


def parse_model(model: type[M], raw: Any, task: str | None, prefix: str = "") -> M:
    """Validate raw data into `model`, mapping pydantic's errors (the first
    MAX_REPORTED_ERRORS) to one CaseError."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        errors = []
        for error in exc.errors(include_url=False)[:MAX_REPORTED_ERRORS]:
            loc = _data_loc(raw, error["loc"])
            field = prefix + _format_loc(loc) if loc else (prefix.rstrip(".") or "(record)")
            errors.append(CaseError(task, field, _owner_id(raw, loc), _problem(error)))
        raise CaseError.combined(errors) from exc


def _data_loc(raw: Any, loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """pydantic's error location without union-member tags ('float', 'str', ...): keep only
    the parts that step into the data (a key of an object, an index of a list)."""
    kept: list[int | str] = []
    node = raw
    for part in loc:
        if isinstance(node, dict) and isinstance(part, str):
            kept.append(part)
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int):
            kept.append(part)
            node = node[part] if part < len(node) else None
        else:
            break  # a scalar: what follows are tags of the union members tried
    return tuple(kept)


def _format_loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _owner_id(raw: Any, loc: tuple[int | str, ...]) -> str | None:
    """The id of the innermost record on the error's path (step_id, memory_id, input_id)."""
    owner, node = None, raw
    for part in loc:
        if isinstance(node, dict):
            owner = next((node[f] for f in ID_FIELDS if isinstance(node.get(f), str)), owner)
            node = node.get(part) if isinstance(part, str) else None
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            break
    if isinstance(node, dict):
        owner = next((node[f] for f in ID_FIELDS if isinstance(node.get(f), str)), owner)
    return owner


def _problem(error: Any) -> str:
    got = error.get("input")
    shown = type(got).__name__ if isinstance(got, (dict, list)) else repr(got)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    if error["type"] == "missing":
        return "required field is missing"
    return f"{error['msg']} (got {shown})"


MAX_DEPTH = 64  # nesting of JSON values (world, tool_args, derivations); deeper is refused


def check_storable_text(raw: Any, task: str | None, prefix: str = "") -> None:
    """Reject NUL characters and unpaired surrogates anywhere in the data (see module doc),
    and values nested deeper than MAX_DEPTH (they could not be serialised back)."""
    if _plainly_storable(raw):
        return  # the usual case, found in one pass; the walk below says where a problem is
    for loc, text in _strings(raw, ()):
        if len(loc) > MAX_DEPTH:
            raise CaseError(task, prefix + _format_loc(loc[:MAX_DEPTH]) + "...", _owner_id(raw, loc),
                            f"nested deeper than {MAX_DEPTH} levels")
        problem = None
        if "\x00" in text:
            problem = "contains a NUL character"
        else:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                problem = "contains an unpaired surrogate (not encodable as UTF-8)"
        if problem:
            field = prefix + (_format_loc(loc) if loc else "(top level)")
            raise CaseError(task, field, _owner_id(raw, loc), problem)


class _LookCloser(Exception):
    """The fast pass cannot vouch for the data: the located walk decides."""


JSON_SCALARS = (int, float, bool, type(None))


def _plainly_storable(raw: Any) -> bool:
    """True only if check_storable_text would pass: every string of plain JSON data gathered
    in one recursive pass (no location kept), then joined and checked once (a lone surrogate
    stays unencodable when joined). Anything unusual (a non-JSON type, a non-empty container
    at the depth limit) answers False. Measured: ~4x faster than the located walk, which was
    the largest share of reading a case file (BENCHMARKS.md, "Ingest")."""
    texts: list[str] = []
    try:
        _gather(raw, 0, texts)
    except _LookCloser:
        return False
    joined = "".join(texts)
    if "\x00" in joined:
        return False
    try:
        joined.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _gather(node: Any, depth: int, texts: list[str]) -> None:
    kind = type(node)
    if kind is str:
        texts.append(node)
    elif kind is dict or kind is list:
        if node and depth >= MAX_DEPTH:
            raise _LookCloser
        for key, value in (node.items() if kind is dict else enumerate(node)):
            if kind is dict:
                if type(key) is not str:
                    raise _LookCloser
                texts.append(key)
            inner = type(value)
            if inner is str:
                texts.append(value)
            elif inner is dict or inner is list:
                if value:  # an empty container holds no text: no call for it
                    _gather(value, depth + 1, texts)
            elif inner not in JSON_SCALARS:
                raise _LookCloser
    elif kind not in JSON_SCALARS:
        raise _LookCloser


def _strings(node: Any, loc: tuple[int | str, ...]) -> Iterator[tuple[tuple[int | str, ...], str]]:
    """Every string (values and keys) with its location; stops descending past MAX_DEPTH
    (the caller reports the over-deep location, which is yielded with an empty string)."""
    if len(loc) > MAX_DEPTH:
        yield loc, ""
    elif isinstance(node, str):
        yield loc, node
    elif isinstance(node, dict):
        for key, value in node.items():
            if isinstance(key, str):
                yield (*loc, key), key
            yield from _strings(value, (*loc, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _strings(value, (*loc, i))


def parse_event(model: type[M], fields: dict[str, Any], task_id: str, kind: str) -> M:
    """One live event's fields (task_id defaulted) → a record of `model`, checked like a case."""
    fields.setdefault("task_id", task_id)
    check_storable_text(fields, task_id, kind)
    return parse_model(model, fields, task_id, f"{kind}.")
