"""Preset layout: x by trace order (turns apart, long traces wrapped into bands), y by kind."""

from __future__ import annotations

from typing import Any

from provrepair.view.layout import DX, DY, MEMORY_LANE, MIN_BAND_COLUMNS, band_columns, place


def step(sid: str, position: int, turn: int = 1, step_type: str = "claim",
         phase: str = "both", replaces: str | None = None) -> dict[str, Any]:
    return {"id": sid, "kind": "step", "step_type": step_type, "position": position,
            "turn": turn, "ts": position * 10, "phase": phase, "replaces": replaces}


def other(nid: str, kind: str, ts: int, turn: int | None = None, phase: str = "both",
          replaces: str | None = None) -> dict[str, Any]:
    return {"id": nid, "kind": kind, "ts": ts, "turn": turn, "phase": phase,
            "replaces": replaces}


def test_trace_order_kind_lanes_and_anchors() -> None:
    nodes = [step("s1", 0, step_type="plan"), step("s2", 1, step_type="memory_write"),
             step("s3", 2, turn=2, step_type="final_answer"),
             other("u1", "user_input", 0, turn=1), other("u2", "user_input", 15, turn=2),
             other("m1", "memory", 10), other("m0", "memory", -5), other("m9", "memory", 99),
             step("s2@r", 1, step_type="memory_write", phase="after", replaces="s2"),
             other("m1@r", "memory", 10, phase="after", replaces="m1")]
    edges = [{"label": "PRODUCE", "src": "s2", "dst": "m1"},
             {"label": "SUPPORT", "src": "m0", "dst": "s3"}]
    place(nodes, edges)
    at = {n["id"]: (n["x"], n["y"]) for n in nodes}
    assert at["s1"][0] < at["s2"][0] < at["s3"][0]
    assert at["s3"][0] - at["s2"][0] == 2 * DX          # a turn boundary leaves a gap
    assert at["u1"] == (at["s1"][0], 0.0) and at["u2"] == (at["s3"][0], 0.0)
    assert at["m1"][0] == at["s2"][0] and at["m1"][1] == MEMORY_LANE * DY   # under its producer
    assert at["m0"][0] < at["s3"][0]                    # just before its first reader
    assert at["m9"][0] > at["s3"][0]                    # after the trace by its timestamp
    assert at["s2@r"][0] == at["s2"][0] and at["s2"][1] < at["s2@r"][1] < MEMORY_LANE * DY
    assert at["m1@r"][0] == at["m1"][0] and at["m1@r"][1] > at["m1"][1]   # stacked under it
    assert len(set(at.values())) == len(at)


def test_long_traces_wrap_into_bands_of_a_screen_shape() -> None:
    nodes = [step(f"s{i}", i) for i in range(4000)]
    place(nodes, [])
    width = band_columns(4000)
    xs = [n["x"] for n in nodes]
    ys = sorted({n["y"] for n in nodes})
    assert max(xs) == (width - 1) * DX and min(xs) == 0.0
    assert len(ys) == -(-4000 // width)                 # one row of claims per band
    aspect = (max(xs) - min(xs)) / (ys[-1] - ys[0])
    assert 0.8 < aspect < 3.0
    assert len({(n["x"], n["y"]) for n in nodes}) == 4000
    # the trace order, unwrapped, for the page's layered layout
    assert [n["order"] for n in nodes] == [float(i) for i in range(4000)]


def test_small_traces_do_not_wrap() -> None:
    assert band_columns(12) == MIN_BAND_COLUMNS
    nodes = [step(f"s{i}", i) for i in range(MIN_BAND_COLUMNS)]
    place(nodes, [])
    assert len({n["y"] for n in nodes}) == 1
