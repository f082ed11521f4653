"""What crosses the wire to FalkorDB: the parameter header out, the compact reply back.

The `falkordb` client turns every value of a reply into Python through a generic
`parse_scalar` dispatch (about 2 µs a value); a plan moves tens of thousands of values, so
that parse was the largest client cost of planning (BENCHMARKS.md, "Planner"). Our queries
return scalars, lists and maps only, so the adapter sends the query itself (same command,
same `--compact` reply the client asks for) and decodes those types here: strings and
integers are taken as the connection already decoded them. A reply holding anything else
(a node, an edge, a path...) is handed to the client's own `QueryResult`, so nothing is
decoded differently from the client.

The parameter header says what the client's `stringify_param_value` says (strings
double-quoted with `\\` and `"` escaped, the only escapes the server reads; map keys in
backticks; see falkordb.py), dispatching on the exact type instead of a chain of
isinstance checks: an ingest batch is thousands of maps, and the client's encoder cost more
than the server's execution of the batch (BENCHMARKS.md, "Ingest"). Values of any other
type, and map keys the client refuses, go through the client's own function.
tests/unit/test_falkordb_wire.py checks that both give the same text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from falkordb.helpers import stringify_param_value
from falkordb.query_result import QueryResult
from redis.exceptions import ResponseError

from provrepair.provenance.store.base import Row, plain

NULL, STRING, INTEGER, BOOLEAN, DOUBLE, ARRAY, MAP = 1, 2, 3, 4, 5, 6, 10
PASSED_AS_IS = frozenset({STRING, INTEGER})  # already decoded by the connection


class NotPlain(Exception):
    """The reply holds a value this module does not decode (node, edge, path, point...)."""


def params_header(params: Mapping[str, Any]) -> str:
    """`CYPHER k=v ... ` (empty without parameters); keys are the query file's `$names`."""
    if not params:
        return ""
    return "CYPHER " + " ".join(f"{k}={param_text(v)}" for k, v in params.items()) + " "


def param_text(value: Any) -> str:
    """One parameter value as Cypher literal text (what `stringify_param_value` returns)."""
    kind = type(value)
    if kind is str:
        if "\\" in value or '"' in value:
            value = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{value}"'
    if kind is dict:
        if not _ACCEPTED_KEYS.issuperset(value):
            _accept_keys(value)
        return _map_text(value)
    if kind is list or kind is tuple:
        return "[" + ",".join([param_text(v) for v in value]) + "]"
    if value is None:
        return "null"
    if kind is int or kind is bool or kind is float:
        return str(value)
    return str(stringify_param_value(value))


def _map_text(value: dict[str, Any]) -> str:
    """A map's text with its common values (strings, integers) inline: an ingest batch is
    thousands of row maps, and a call per value was most of the encoding time."""
    parts = []
    for key, item in value.items():
        kind = type(item)
        if kind is str:
            if "\\" in item or '"' in item:
                item = item.replace("\\", "\\\\").replace('"', '\\"')
            parts.append(f'`{key}`:"{item}"')
        elif kind is int:
            parts.append(f"`{key}`:{item}")
        else:
            parts.append(f"`{key}`:{param_text(item)}")
    return "{" + ",".join(parts) + "}"


_ACCEPTED_KEYS: set[str] = set()  # map keys seen and accepted (property names: a few dozen)


def _accept_keys(value: dict[Any, Any]) -> None:
    """Map keys go in backticks: the client refuses an empty key or one with a backtick
    (the server reads no escape there), and so do we, with its own error."""
    for key in value:
        if type(key) is not str or not key or "`" in key:
            stringify_param_value({key: None})  # raises ValueError
            raise ValueError(f"map key {key!r} cannot be sent")
        _ACCEPTED_KEYS.add(key)


def check_reply(reply: Any) -> None:
    """Raise the error a reply carries (first element: query error; last: run-time error)."""
    if isinstance(reply, ResponseError):
        raise reply
    if reply and isinstance(reply[0], ResponseError):
        raise reply[0]
    if reply and isinstance(reply[-1], ResponseError):
        raise reply[-1]


def value(kind: int, raw: Any) -> Any:
    """One compact value (type code, payload) → plain Python."""
    if kind in PASSED_AS_IS:
        return raw
    if kind == NULL:
        return None
    if kind == BOOLEAN:
        return raw == "true"
    if kind == DOUBLE:
        return float(raw)
    if kind == ARRAY:
        return [v if k in PASSED_AS_IS else value(k, v) for k, v in raw]
    if kind == MAP:
        return {raw[i]: value(*raw[i + 1]) for i in range(0, len(raw), 2)}
    raise NotPlain(kind)


def rows(graph: Any, reply: Any) -> list[Row]:
    """The rows of a checked reply, one dict per row keyed by column name."""
    if len(reply) < 3:  # a write without RETURN: statistics only
        return []
    names = [column[1] for column in reply[0]]
    try:
        # Most cells are strings or integers: kept as they are, no call made for them.
        return [{name: raw if kind in PASSED_AS_IS else value(kind, raw)
                 for name, (kind, raw) in zip(names, row, strict=True)} for row in reply[1]]
    except NotPlain:
        result = QueryResult(graph, reply)
        return [{name: plain(v) for name, v in zip(names, row, strict=True)}
                for row in result.result_set]
