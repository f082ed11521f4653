"""Preset positions by trace order: x by trace position (turns apart), y by kind.

Computed here, not in the browser: a force layout of thousands of nodes takes the page
minutes, a preset one nothing. Lanes from top to bottom: user inputs, then steps by type,
then memories. A user input sits above the first step of its turn; a memory under the step
that produced it (else just before its first reader, else where its timestamp falls in the
trace); a node written by a repair sits just under the node it replaces, so the REPLAYS
link between them is short and vertical. A long trace wraps into bands stacked downwards
(like lines of text), so the whole graph keeps roughly the shape of a screen.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

DX, DY = 100.0, 90.0
STEP_LANES = {"plan": 1, "memory_read": 2, "claim": 3, "tool_action": 4,
              "tool_observation": 5, "final_answer": 6, "memory_write": 7,
              "memory_update": 7, "memory_delete": 7, "memory_consolidate": 7}
MEMORY_LANE = 8.5
STACK, STACK_ROWS = 0.4, 12      # memories sharing a column: rows of this height, then wrap
AFTER_SHIFT = 0.5                # lanes below the replaced node
BAND_LANES = MEMORY_LANE + STACK * STACK_ROWS + 2.0   # height of one band, in lanes
MIN_BAND_COLUMNS = 60            # traces up to this many columns never wrap
ASPECT = 1.6                     # width / height the wrapped graph aims at

Node = dict[str, Any]


def lane(node: Node) -> float:
    if node["kind"] == "user_input":
        return 0.0
    if node["kind"] == "memory":
        return MEMORY_LANE
    return float(STEP_LANES.get(node.get("step_type", ""), 3))


def place(nodes: list[Node], edges: Iterable[Node]) -> None:
    """Set `x` and `y` on every node (edges: dicts with label, src, dst node ids)."""
    steps = sorted((n for n in nodes if n["kind"] == "step" and n["phase"] == "both"),
                   key=lambda n: (n.get("position", 0), n["id"]))
    column = _step_columns(steps)
    by_ts = sorted((n.get("ts", 0), column[n["id"]]) for n in steps)
    producer, first_reader = _anchors(edges, column)
    turn_start: dict[Any, float] = {}
    for n in steps:
        turn_start.setdefault(n.get("turn"), column[n["id"]])
    for n in nodes:
        if n["phase"] == "both" and n["kind"] == "user_input":
            column[n["id"]] = turn_start.get(n.get("turn"), _column_at(by_ts, n.get("ts", 0)))
        elif n["phase"] == "both" and n["kind"] == "memory":
            column[n["id"]] = producer.get(n["id"], first_reader.get(n["id"],
                                           _column_at(by_ts, n.get("ts", 0))))
    for n in nodes:
        if n["phase"] == "after":
            fallback = _column_at(by_ts, n.get("ts", 0))
            column[n["id"]] = column.get(n.get("replaces") or "", fallback)
    _assign(nodes, column)


def _step_columns(steps: list[Node]) -> dict[str, float]:
    column: dict[str, float] = {}
    gap, previous = 0, None
    for rank, n in enumerate(steps):
        if previous is not None and n.get("turn") != previous:
            gap += 1
        previous = n.get("turn")
        column[n["id"]] = float(rank + gap)
    return column


def _anchors(edges: Iterable[Node], column: dict[str, float]) -> tuple[dict[str, float],
                                                                       dict[str, float]]:
    producer: dict[str, float] = {}
    first_reader: dict[str, float] = {}
    for e in edges:
        if e["label"] == "PRODUCE" and e["src"] in column:
            producer.setdefault(e["dst"], column[e["src"]])
        elif e["dst"] in column and e["src"] not in column:
            at = column[e["dst"]] - 0.35
            first_reader[e["src"]] = min(at, first_reader.get(e["src"], at))
    return producer, first_reader


def _column_at(by_ts: list[tuple[int, float]], ts: int) -> float:
    """Just before the first step at or after `ts` (after the last one if none)."""
    index = bisect_left(by_ts, (ts, float("-inf")))
    if index < len(by_ts):
        return by_ts[index][1] - 0.5
    return (by_ts[-1][1] + 1.0) if by_ts else 0.0


def band_columns(columns: float) -> int:
    """Columns per band: ASPECT ≈ (k·DX) / (columns/k · band height)."""
    wanted = math.sqrt(ASPECT * max(columns, 1.0) * BAND_LANES * DY / DX)
    return max(MIN_BAND_COLUMNS, math.ceil(wanted))


def _assign(nodes: list[Node], column: dict[str, float]) -> None:
    width = band_columns(max(column.values(), default=0.0) + 1.0)
    stacked: dict[tuple[int, float], int] = defaultdict(int)
    for n in sorted(nodes, key=lambda n: (n["phase"] != "both", n.get("ts", 0), n["id"])):
        col = column.get(n["id"], 0.0)
        row = lane(n) + (AFTER_SHIFT if n["phase"] == "after" and n["kind"] == "step" else 0.0)
        if n["kind"] == "memory":
            k = stacked[(round(col * 4), row)]
            stacked[(round(col * 4), row)] += 1
            col += (k // STACK_ROWS) * 0.25
            row += (k % STACK_ROWS) * STACK
        band = max(0, math.floor(column.get(n["id"], 0.0) / width))
        n["order"] = round(col, 2)   # trace order, unwrapped (the page's layered layout)
        col -= band * width
        row += band * BAND_LANES
        n["x"], n["y"] = round(col * DX, 1), round(row * DY, 1)
