"""JSON as the case format means it: no NaN/Infinity tokens, no duplicate keys.

Python's `json` accepts both silently (a NaN inside `world` was stored as null; of two equal
keys the last won). Case files and event streams are parsed here instead; the callers turn
the ValueError into a one-line InputError naming the file and line.
"""

from __future__ import annotations

import json
from typing import Any


class StrictJSONError(ValueError):
    """A NaN/Infinity token, a duplicate key or an integer too long to read."""


MAX_NUMBER_CHARS = 1000  # Python refuses to convert integers past 4,300 digits anyway


def loads(text: str) -> Any:
    return json.loads(text, parse_constant=_non_finite, object_pairs_hook=_unique_keys,
                      parse_int=_integer)


def _integer(token: str) -> int:
    if len(token) > MAX_NUMBER_CHARS:
        raise StrictJSONError(f"an integer of {len(token)} digits (at most "
                              f"{MAX_NUMBER_CHARS} are read)")
    return int(token)


def _non_finite(token: str) -> Any:
    raise StrictJSONError(f"{token} is not a JSON number (non-finite numbers are refused)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise StrictJSONError(f"duplicate key {key!r} in one object")
        out[key] = value
    return out
