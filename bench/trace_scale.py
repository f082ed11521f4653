"""A long conversation's trace: ingest and plan time, graph size (issue 28).

    python bench/trace_scale.py [--turns 1700] [--window 8] [--history-turns 120]

Writes an OTLP/JSON trace of one agent conversation: each turn a memory search (up to 3
records the conversation wrote earlier),
a chat request with a tool call, the tool's span, a chat request answering, and a memory
write storing the answer (linked to the answering span). Two shapes:
- "window": each request carries the memory system message and the last `--window` messages
  of the conversation (bounded context; `--turns` turns, about 10 MB at 1,700);
- "history": each request re-sends the whole conversation (the raw trace grows with the
  square of the turns; `--history-turns` turns).
Then, against a private embedded store: load (parse + read the run), ingest, and plan with
the real planner (best of 3) one fault at a time: the record written a third of the way in,
and the one written at 90% (each searched again by the next two turns and halfway on);
nodes and edges stored.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from probes import private_server  # bench/ (the script's own folder, first on sys.path)

from provrepair.loaders.otel import load_otlp
from provrepair.provenance.edges import derive_edges
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.config import open_store
from provrepair.repair.plan import plan

TRACE = "5c" * 16


def _attr(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def conversation(turns: int, window: int | None) -> dict[str, Any]:
    """The OTLP/JSON document; `window` None re-sends the whole history."""
    spans: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    clock = [1_000_000_000]

    def span(op: str, *attrs: dict[str, Any], parent: str | None = None,
             links: tuple[str, ...] = ()) -> str:
        clock[0] += 1000
        span_id = format(len(spans) + 2, "016x")
        spans.append({"traceId": TRACE, "spanId": span_id, "name": op,
                      "parentSpanId": parent or format(1, "016x"),
                      "links": [{"traceId": TRACE, "spanId": link} for link in links],
                      "startTimeUnixNano": str(clock[0]), "endTimeUnixNano": str(clock[0] + 1),
                      "attributes": [_attr("gen_ai.operation.name", op), *attrs]})
        return span_id

    for t in range(turns):
        earlier = sorted({t - 1, t - 2, t // 2} - {-1, -2, t})
        found = [{"id": f"m_{e}_0", "content": f"F{e:04d} seat {e % 40}C"} for e in earlier]
        span("search_memory", _attr("gen_ai.memory.records", json.dumps(found)),
             _attr("gen_ai.memory.query.text", f"turn {t} preferences"))
        system = _text("system", "What you remember:\n"
                       + "\n".join(f"- {r['content']}" for r in found))
        history.append(_text("user", f"Turn {t}: please rebook flight F{t:04d} and tell me "
                                     "the new seat; keep my usual preferences in mind."))
        call = {"type": "tool_call", "id": f"call_{t}", "name": "rebook",
                "arguments": {"flight": f"F{t:04d}", "seat": "aisle"}}

        def inputs(system: dict[str, Any] = system) -> str:
            shown = history if window is None else history[-window:]
            return json.dumps([system, *shown])

        span("chat", _attr("gen_ai.input.messages", inputs()),
             _attr("gen_ai.output.messages", json.dumps([{"role": "assistant",
                                                          "parts": [call]}])))
        history.append({"role": "assistant", "parts": [call]})
        result = {"flight": f"F{t:04d}", "seat": f"{t % 40}C", "status": "confirmed"}
        span("execute_tool", _attr("gen_ai.tool.call.id", f"call_{t}"),
             _attr("gen_ai.tool.call.result", json.dumps(result)))
        history.append({"role": "tool", "parts": [{"type": "tool_call_response",
                                                   "id": f"call_{t}", "response": result}]})
        answer = f"Flight F{t:04d} is rebooked, seat {t % 40}C (aisle, as you prefer)."
        answered = span("chat", _attr("gen_ai.input.messages", inputs()),
                        _attr("gen_ai.output.messages", json.dumps([_text("assistant", answer)])))
        history.append(_text("assistant", answer))
        span("create_memory", _attr("gen_ai.memory.records", json.dumps(
            [{"id": f"m_{t}_0", "content": f"F{t:04d} seat {t % 40}C"}])), links=(answered,))
    root = {"traceId": TRACE, "spanId": format(1, "016x"), "name": "invoke_agent",
            "startTimeUnixNano": "1000000000", "endTimeUnixNano": str(clock[0] + 10),
            "attributes": [_attr("gen_ai.operation.name", "invoke_agent"),
                           _attr("gen_ai.conversation.id", "long-conversation"),
                           _attr("provrepair.diagnosed_faults", f"m_{turns // 3}_0")]}
    return {"resourceSpans": [{"resource": {"attributes": []},
                               "scopeSpans": [{"scope": {"name": "bench"},
                                               "spans": [root, *spans]}]}]}


def run(path: Path, faults: list[str]) -> dict[str, Any]:
    started = time.perf_counter()
    (case,) = load_otlp([path])
    loaded = time.perf_counter()
    edges = len(derive_edges(case))
    with open_store() as store:
        t0 = time.perf_counter()
        ingest_case(store, case, replace=True)
        stored = time.perf_counter()
        plans = {}
        for fault in faults:
            times = []
            for _ in range(3):
                t1 = time.perf_counter()
                p = plan(store, case.task_id, [fault])
                times.append(time.perf_counter() - t1)
            plans[fault] = f"{min(times):.2f} s, {len(p.affected_ids)} affected"
    return {"mb": round(path.stat().st_size / 1e6, 1), "steps": len(case.trace),
            "records": len(case.memory_store), "edges": edges,
            "load_s": round(loaded - started, 2), "ingest_s": round(stored - t0, 2),
            "plan": plans}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1700)
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--history-turns", type=int, default=120)
    args = parser.parse_args(argv)
    os.environ.pop("PROVREPAIR_URI", None)
    with tempfile.TemporaryDirectory(prefix="provrepair-trace-scale-") as tmp, \
            private_server(Path(tmp)):
        for name, turns, window in (("window", args.turns, args.window),
                                    ("history", args.history_turns, None)):
            path = Path(tmp) / f"{name}.json"
            path.write_text(json.dumps(conversation(turns, window)))
            row = run(path, [f"m_{turns // 3}_0", f"m_{turns * 9 // 10}_0"])
            print(f"{name:<8} {turns} turns: " + ", ".join(f"{k} {v}" for k, v in row.items()))
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
