"""Limits on what the outside formats may hand the loaders (issue 36, bad input): ids, value
nesting and times. Input beyond them is refused in one line naming what and where, before
anything is written, never a traceback (a RecursionError on a value nested 10,000 deep, an
integer trace id, a 1 MB record id, a 400-digit timestamp).

- An id (record, tool call, conversation, task…) is a string, or an integer where the format
  allows one, of at most MAX_ID_CHARS characters.
- A value (an attribute, a tool call's arguments, a record's metadata) nests at most
  MAX_DEPTH lists and objects deep: deeper is no agent's data. In OTLP/JSON a value level
  is four JSON levels (`{"kvlistValue": {"values": [{"key", "value"}]}}`): ENCODED_DEPTH.
- A time is a whole number of nanoseconds since the epoch that fits OTLP's fixed64
  (0 ≤ t < 2^64), as an integer or a decimal string of at most 20 digits.
"""

from __future__ import annotations

import json
from typing import Any

from provrepair.provenance.errors import CaseError, InputError

MAX_ID_CHARS = 1024
MAX_DEPTH = 64
ENCODED_DEPTH = 4 * MAX_DEPTH + 8
MAX_TIME = 2**64


def check_id(task_id: str | None, field: str, value: Any, *, integers: bool = True) -> str:
    """An id as text; refused if it is not a string (or an integer, when `integers`), is
    empty, or longer than MAX_ID_CHARS."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or (
            isinstance(value, int) and not integers):
        raise CaseError(task_id, field, None, "expected a record id, tool call id or other "
                        f"id (a string), got {type(value).__name__}")
    text = str(value)
    if not text or len(text) > MAX_ID_CHARS:
        raise CaseError(task_id, field, short(text), f"an id of {len(text)} characters: ids "
                        f"are 1 to {MAX_ID_CHARS}")
    return text


def short(text: str, keep: int = 40) -> str:
    """Text shortened for a one-line message."""
    return text if len(text) <= keep else f"{text[:keep]}… ({len(text)} characters)"


def check_depth(value: Any, where: str, limit: int = MAX_DEPTH) -> None:
    """Refuse a value nested deeper than `limit` (iteratively: any depth is safe to look at)."""
    stack = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, tuple, dict)):
            if level >= limit:
                raise InputError(f"{where}: a value nested more than {limit} levels deep; "
                                 "refused")
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict)
                                                  else item))


def loads(text: str, where: str) -> Any:
    """json.loads with the nesting limit (JSON nested too deep for the parser is refused too)."""
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise InputError(f"{where}: JSON nested too deeply; refused") from exc
    check_depth(value, where)
    return value


def check_time(value: Any, where: str) -> int:
    """A nanosecond timestamp (integer or decimal string) within OTLP's fixed64."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or (
            isinstance(value, str) and not (value.isascii() and value.isdigit()
                                            and len(value) <= 20)):
        raise InputError(f"{where}: expected nanoseconds since the epoch (an integer, or a "
                         f"decimal string of at most 20 digits), got {short(repr(value))}")
    number = int(value)
    if not 0 <= number < MAX_TIME:
        raise InputError(f"{where}: time {short(str(number))} is outside 0 to 2^64 ns")
    return number
