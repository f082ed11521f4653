"""A conversation of many requests captured live (issue 28, item 4): each request its own
trace, one `gen_ai.conversation.id`, fed to the capture (loaders/otel_runs.py `LiveRuns`) as
the SDK's exporter would hand it over, against a private embedded store.

    python bench/live_conversation.py [--requests 200] [--window 0] [--repaired]

Each request: `invoke_agent` root, a memory search, a chat span whose input re-sends the
history (so a request's own spans grow with the conversation, as a real client's do), a tool
call and its result, a second chat span, a memory update (a new version of one record each
time). Two captures of the same spans, one after the other, each into a fresh graph:
- `extend`: the default, each later trace written in its own cost (loaders/otel_extend.py);
- `rebuild`: `max_readings=0`, so every trace end reads the whole conversation again from the
  journal and replaces the task (the behaviour before).
With `--repaired`, two more, the conversation repaired (fault `m_best`) after its first
request (the repair is not timed):
- `extend, repaired`: the default; later traces still extend the task (a repair's node ids
  reserved, its statuses kept);
- `merge`: `max_readings=0`, so every later trace reads the conversation again and, the task
  being repaired, merges that reading into it (loaders/otel_merge.py) instead of replacing it.
Reported: total time, and the mean time per request (the flush that ends its trace) over the
first and the last 10 requests. With `--window K` the chat spans carry only the last K
messages of the history (a client that trims its context), so every request's trace has the
same size and what is left of the growth is the capture's own.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from typing import Any

from provrepair.loaders.otel_runs import LiveRuns
from provrepair.loaders.otlp_json import attributes_json
from provrepair.provenance.keys import task_key
from provrepair.provenance.store.config import open_store
from provrepair.repair.service import run_repair

CONV = "bench-conversation"


def span(trace: int, sid: int, parent: int | None, name: str, start: int,
         attributes: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": f"{trace:032x}", "spanId": f"{sid:016x}", "name": name,
        "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 1),
        "attributes": attributes_json({"gen_ai.operation.name": name.split()[0],
                                       "gen_ai.conversation.id": CONV, **attributes}),
        "status": {"code": 0}}
    if parent is not None:
        out["parentSpanId"] = f"{parent:016x}"
        out["flags"] = 0x100
    return out


def requests(count: int, window: int = 0) -> list[list[dict[str, Any]]]:
    """Each request's spans in the order the SDK ends them (children first, root last)."""
    history: list[dict[str, Any]] = []
    out = []
    t = 1_000_000
    for n in range(count):
        trace, base = n + 1, (n + 1) * 100
        t += 1000
        user = {"role": "user", "parts": [{"type": "text", "content": f"Question {n}?"}]}
        notes = {"role": "system", "parts": [{"type": "text",
                                              "content": f"Notes: answer {n - 1}"}]}
        history.append(user)
        shown = history[-window:] if window else history
        call = {"type": "tool_call", "id": f"call_{n}", "name": "get_price",
                "arguments": {"store": "StoreA"}}
        asked = {"role": "assistant", "parts": [call]}
        result = {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"call_{n}",
                                            "response": f"StoreA: ${n}.00"}]}
        answer = {"role": "assistant", "parts": [{"type": "text",
                                                  "content": f"Answer {n}: StoreA."}]}
        spans = [
            span(trace, base + 1, base, "search_memory", t + 1, {
                "gen_ai.memory.records": json.dumps([{"id": "m_best",
                                                      "content": f"answer {n - 1}"}])}),
            span(trace, base + 2, base, "chat", t + 2, {
                "gen_ai.input.messages": json.dumps([notes, *shown]),
                "gen_ai.output.messages": json.dumps([asked])}),
            span(trace, base + 3, base, "execute_tool get_price", t + 3, {
                "gen_ai.tool.call.id": f"call_{n}", "gen_ai.tool.name": "get_price",
                "gen_ai.tool.call.result": f"StoreA: ${n}.00"}),
            span(trace, base + 4, base, "chat", t + 4, {
                "gen_ai.input.messages": json.dumps([notes, *shown, asked, result]),
                "gen_ai.output.messages": json.dumps([answer])}),
            span(trace, base + 5, base, "update_memory", t + 5, {
                "gen_ai.memory.record.id": "m_best",
                "gen_ai.memory.records": json.dumps([{"id": "m_best",
                                                      "content": f"answer {n}"}])}),
            span(trace, base, None, "invoke_agent shopper", t, {}),
        ]
        history += [asked, result, answer]
        out.append(spans)
    return out


def capture(store: Any, spans: list[list[dict[str, Any]]], repaired: bool = False,
            **options: Any) -> tuple[list[float], dict[str, int]]:
    """Seconds per request: one export per span (SimpleSpanProcessor), the root's flush
    stores the trace; and how the traces were stored. `repaired`: the task is repaired
    after the first request (not timed)."""
    runs = LiveRuns(store, **options)
    times = []
    for n, request in enumerate(spans):
        started = time.perf_counter()
        for one in request:
            runs.add([one])
        times.append(time.perf_counter() - started)
        if repaired and n == 0:
            run_repair(store, CONV, faults=["m_best"])
    assert runs.errors == [] and runs.stored == [CONV], runs.errors
    return times, {"rebuilds": runs.rebuilds, "extensions": runs.extensions}


def summary(name: str, times: list[float]) -> dict[str, Any]:
    return {"mode": name, "total_s": round(sum(times), 2),
            "first10_ms": round(statistics.mean(times[:10]) * 1000, 1),
            "last10_ms": round(statistics.mean(times[-10:]) * 1000, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--window", type=int, default=0,
                        help="messages of the history each chat span carries (0: all)")
    parser.add_argument("--repaired", action="store_true",
                        help="also capture it repaired after its first request")
    args = parser.parse_args(argv)
    spans = requests(args.requests, args.window)
    modes: list[tuple[str, dict[str, Any]]] = [("extend", {}), ("rebuild", {"max_readings": 0})]
    if args.repaired:
        modes += [("extend, repaired", {"repaired": True}),
                  ("merge", {"repaired": True, "max_readings": 0})]
    results = []
    with tempfile.TemporaryDirectory(prefix="provrepair-live-bench-") as home:
        os.environ["PROVREPAIR_HOME"] = home
        os.environ.pop("PROVREPAIR_URI", None)
        # one server for every mode (stopped when this store closes), a graph each
        with open_store(migrate=True, stop_started_server=True):
            for name, options in modes:
                os.environ["PROVREPAIR_GRAPH"] = f"bench_{name.replace(', ', '_')}"
                with open_store(migrate=True) as store:
                    times, how = capture(store, spans, **options)
                    nodes = store.run("list_task_nodes", {"task_key": task_key(CONV)})
                results.append({**summary(name, times), **how, "task_nodes": len(nodes)})
    print(json.dumps({"requests": args.requests, "window": args.window, "python": platform.python_version(),
                      "load": os.getloadavg(), "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
