"""A conversation captured live is extended trace by trace, each request written in its own
cost (loaders/otel_extend.py), and the stored task is the one a reading of all its spans at
once gives: node for node, edge for edge. The real OpenTelemetry SDK, the real `openai` client
instrumented by opentelemetry-instrumentation-openai-v2 against the suite's test double, the
real embedded store."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest.mock import patch

import openai
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Tracer

from provrepair.loaders.otel import load_otlp
from provrepair.loaders.otel_live import OtlpJsonFile, ProvrepairSpanExporter, memory_span
from provrepair.loaders.otel_runs import LiveRuns
from provrepair.loaders.otlp_json import attributes_json
from provrepair.provenance.errors import StoreUnavailable
from provrepair.provenance.ingest import delete_task, ingest_cases
from provrepair.provenance.keys import task_key
from provrepair.provenance.lock import lock_holder, release
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from tests import otel_agent
from tests.openai_double import ChatDouble, Reply

CONV = "conv-extend"
# Bookkeeping of how the task was written, not of what it holds (`warnings`: the capture's
# copy of world["provrepair.warnings"], for `provrepair tasks`).
WRITE_ONLY = {"content_hash", "capture_token", "complete", "ingested_at", "warnings"}


def script(numbers: range) -> list[Reply]:
    """Every other request calls a tool before it answers."""
    replies: list[Reply] = []
    for n in numbers:
        if n % 2 == 0:
            replies.append(Reply(tool_calls=[{
                "id": f"call_{n}", "type": "function", "function": {
                    "name": "get_price", "arguments": json.dumps({"store": "StoreA"})}}]))
        replies.append(Reply(f"Answer {n}: StoreA at $68.50."))
    return replies


@contextmanager
def instrumented(exporters: list[Any], replies: list[Reply]) -> Iterator[tuple[Tracer, Any]]:
    provider = TracerProvider()
    for exporter in exporters:
        provider.add_span_processor(SimpleSpanProcessor(exporter))  # one export per span
    double = ChatDouble(replies)
    client = openai.OpenAI(base_url=double.start(), api_key="test")
    with patch.dict(os.environ, otel_agent.CONTENT_ON_SPANS):
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            yield provider.get_tracer("extend-agent"), client
        finally:
            instrumentor.uninstrument()
            double.stop()
            provider.shutdown()


@dataclass
class Conversation:
    history: list[dict[str, Any]] = field(default_factory=list)
    memory: dict[str, str] = field(
        default_factory=lambda: {"m_best": "StoreB sells P0199 for $59.99"})


def conversation(tracer: Tracer, client: Any, numbers: range,
                 state: Conversation | None = None) -> None:
    """Requests of one conversation, one trace each: each request re-sends the history (its
    context names earlier messages, tool calls and results), searches the memory, and
    updates the record `m_best` (a new version each time) or writes a new one."""
    state = state or Conversation()
    history, memory = state.history, state.memory
    for n in numbers:
        with tracer.start_as_current_span("invoke_agent shopper") as root:
            root.set_attribute("gen_ai.operation.name", "invoke_agent")
            root.set_attribute("gen_ai.conversation.id", CONV)
            root.set_attribute("provrepair.domain", "shopping")
            root.set_attribute("provrepair.diagnosed_faults", ["m_best"])
            if n > 0:  # named from the second request on: only an extension can store it
                root.set_attribute("provrepair.memory_namespace", "shopper-memory")
            found = [{"id": k, "content": v} for k, v in sorted(memory.items())]
            with memory_span(tracer, "search_memory", records=found, query="P0199",
                             conversation_id=CONV):
                pass
            notes = {"role": "system", "content": "Notes: " + "; ".join(
                r["content"] for r in found)}
            history.append({"role": "user", "content": f"Question {n}: where is P0199?"})
            message = otel_agent.chat(client, [notes, *history])
            history.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls or []:
                history.append({"role": "tool", "tool_call_id": call.id,
                                "content": otel_agent.execute_tool(tracer, call, CONV)})
                message = otel_agent.chat(client, [notes, *history])
                history.append(message.model_dump(exclude_none=True))
            record = "m_best" if n % 3 else f"m_note_{n}"
            memory[record] = message.content
            with memory_span(tracer, "update_memory" if record in found else "create_memory",
                             record_id=record,
                             records=[{"id": record, "content": message.content}],
                             conversation_id=CONV):
                pass


def snapshot(store: GraphStore, task: str = CONV, write_only: set[str] = WRITE_ONLY
             ) -> tuple[dict[str, Any], list[Any], list[Any]]:
    """The stored task, its nodes and its edges, comparable across ways of writing it
    (`write_only`: task properties that say how it was written, left out)."""
    key = task_key(task)
    props = store.run("get_task", {"task_key": key})[0]["props"]
    nodes = sorted(json.dumps(r["props"], sort_keys=True) for r in
                    store.run("list_task_nodes", {"task_key": key}))
    edges = sorted((r["label"], r["src"], r["dst"], r["sufficient"]) for r in
                   store.run("list_task_edges", {"task_key": key}))
    return {k: v for k, v in props.items() if k not in write_only}, nodes, edges


def test_live_requests_equal_the_same_spans_ingested_at_once(
        falkordb_store: GraphStore, tmp_path: Path) -> None:
    requests = 7
    path = tmp_path / "conversation.jsonl"
    exporter = ProvrepairSpanExporter(falkordb_store)
    with instrumented([exporter, OtlpJsonFile(path)], script(range(requests))) as (tracer, client):
        conversation(tracer, client, range(requests))
    assert exporter.errors == [] and exporter.stored == [CONV]
    # the first request stored whole, every later one extended the task
    assert (exporter.runs.rebuilds, exporter.runs.extensions) == (1, requests - 1)
    live = snapshot(falkordb_store)
    task = falkordb_store.run("get_task", {"task_key": task_key(CONV)})[0]["props"]
    assert "content_hash" not in task  # the whole case's hash changes with every request
    assert task["memory_namespace"] == "shopper-memory"  # as a whole reading names it
    delete_task(falkordb_store, CONV)
    ingest_cases(falkordb_store, load_otlp([path]))
    whole = snapshot(falkordb_store)
    assert live[0] == whole[0]
    assert live[1] == whole[1]
    assert live[2] == whole[2]
    versions = [json.loads(n)["id"] for n in live[1] if json.loads(n).get("record_id")]
    assert "m_best~2" in versions  # updates made versions, named as a whole reading names them


def test_requests_served_by_two_processes_in_turn_equal_one_reading(
        falkordb_store: GraphStore, tmp_path: Path) -> None:
    """Two exporters (two processes) serve the conversation's requests in turn: each sees the
    task another wrote since its own last write (its capture token differs) and reads the
    conversation again from the journal before extending; the task is still exact."""
    path = tmp_path / "conversation.jsonl"
    state = Conversation()
    first, second = (ProvrepairSpanExporter(falkordb_store) for _ in range(2))
    for exporter, numbers in ((first, range(0, 2)), (second, range(2, 4)),
                              (first, range(4, 6))):
        with instrumented([exporter, OtlpJsonFile(path)], script(numbers)) as (tracer, client):
            conversation(tracer, client, numbers, state)
    assert first.errors == second.errors == []
    # per phase: the first trace read again whole (another process wrote last), the next
    # extended
    assert (first.runs.rebuilds, first.runs.extensions) == (2, 2)
    assert (second.runs.rebuilds, second.runs.extensions) == (1, 1)
    live = snapshot(falkordb_store)
    delete_task(falkordb_store, CONV)
    ingest_cases(falkordb_store, load_otlp([path]))
    assert live == snapshot(falkordb_store)


def chat_trace(n: int, t0: int, messages: list[dict[str, Any]], answer: str
               ) -> list[dict[str, Any]]:
    """One request as OTLP/JSON: an `invoke_agent` root and one chat span (children end
    first, as the SDK exports them)."""
    trace, attrs = f"{n:032x}", {"gen_ai.conversation.id": CONV}

    def one(sid: str, name: str, start: int, extra: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "traceId": trace, "spanId": f"{n:08x}{sid}", "name": name,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 1),
            "status": {"code": 0}, "attributes": attributes_json(
                {"gen_ai.operation.name": name.split()[0], **attrs, **extra})}
        if sid != "00000000":
            out["parentSpanId"], out["flags"] = f"{n:08x}00000000", 0x100
        return out

    output = [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
    return [one("00000001", "chat", t0 + 1, {"gen_ai.input.messages": json.dumps(messages),
                                             "gen_ai.output.messages": json.dumps(output)}),
            one("00000000", "invoke_agent shopper", t0, {})]


def ingested_at_once(store: GraphStore, traces: list[list[dict[str, Any]]], tmp_path: Path
                     ) -> tuple[dict[str, Any], list[Any], list[Any]]:
    """The task the same spans give from a file, in one go (the live one deleted first)."""
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": s}]}]})
                            + "\n" for s in traces))
    delete_task(store, CONV)
    ingest_cases(store, load_otlp([path]))
    return snapshot(store)


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def test_a_trace_that_changes_what_is_stored_is_read_again_whole(
        store: GraphStore, tmp_path: Path) -> None:
    """Both engines. The second request continues the first one's turn (no new user message): the stored
    final answer becomes a claim, which adding cannot say, so that trace is read again with
    the whole conversation; the third (a new turn) extends again. Equal to one reading."""
    q1, a1, a2, q3 = text("user", "Q1?"), text("assistant", "A1."), "A2.", text("user", "Q3?")
    traces = [chat_trace(1, 1000, [q1], "A1."),
              chat_trace(2, 2000, [q1, a1, text("system", "think again")], a2),
              chat_trace(3, 3000, [q1, a1, text("assistant", a2), q3], "A3.")]
    runs = LiveRuns(store)
    for spans in traces:
        for one in spans:
            runs.add([one])
    assert runs.errors == [] and (runs.rebuilds, runs.extensions) == (2, 1)
    live = snapshot(store)
    finals = [json.loads(n)["content"] for n in live[1]
              if json.loads(n).get("step_type") == "final_answer"]
    assert sorted(finals) == ["A2.", "A3."]
    assert ingested_at_once(store, traces, tmp_path) == live


class FailingOnce:
    """The real store, except that the first `query` statement fails as a dropped connection
    does, and with `dies` every statement after it (the process is gone). Fault injection,
    not a mock: every other statement runs on the real engine."""

    def __init__(self, store: GraphStore, query: str, *, dies: bool = False):
        self.store, self.query, self.dies, self.failed = store, query, dies, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def run(self, name: str, params: Any = None) -> Any:
        if (name == self.query and not self.failed) or (self.failed and self.dies):
            self.failed = True
            raise StoreUnavailable("connection lost inside an extension")
        return self.store.run(name, params)


def three_requests() -> list[list[dict[str, Any]]]:
    q1, q2, q3 = (text("user", f"Q{n}?") for n in (1, 2, 3))
    return [chat_trace(1, 1000, [q1], "A1."),
            chat_trace(2, 2000, [q1, text("assistant", "A1."), q2], "A2."),
            chat_trace(3, 3000, [q1, text("assistant", "A1."), q2, text("assistant", "A2."),
                                 q3], "A3.")]


def test_an_extension_cut_off_half_way_is_stored_whole_at_the_next_export(
        falkordb_store: GraphStore, tmp_path: Path) -> None:
    """The second request's nodes are written, its edges are not (the connection drops): the
    trace stays unassigned, the reading is dropped, and the retry reads the conversation again
    whole: the task is exact, nothing lost or doubled."""
    traces = three_requests()
    runs = LiveRuns(FailingOnce(falkordb_store, "merge_edges"))  # type: ignore[arg-type]
    runs.add(traces[0])
    runs.add(traces[1])  # its edges cut off: retried at once (in the same export), whole
    assert runs.errors == [] and runs.retry == {}
    assert (runs.rebuilds, runs.extensions) == (2, 0)
    runs.add(traces[2])  # the reading of that retry is kept: the third trace extends
    assert (runs.rebuilds, runs.extensions) == (2, 1)
    live = snapshot(falkordb_store)
    assert ingested_at_once(falkordb_store, traces, tmp_path) == live


def test_a_capture_killed_inside_an_extension_loses_nothing_exported(
        falkordb_store: GraphStore) -> None:
    """Killed half-way through writing the second request (its nodes, not its edges): the
    next capture finds the task's capture token changed, and recovers the trace left
    unassigned: every request of the conversation is in the task."""
    now = [time.time_ns()]
    traces = three_requests()
    killed = LiveRuns(FailingOnce(falkordb_store, "merge_edges", dies=True),  # type: ignore[arg-type]
                      clock=lambda: now[0])
    killed.add(traces[0])
    killed.add(traces[1])  # the process dies here: its retry fails too
    assert killed.retry and killed.extensions == 0
    assert len(read_case(falkordb_store, CONV).session) == 2  # the nodes it wrote, no more
    # its task lock goes as a dead process's does (here the pid lives on: freed by hand)
    holder = lock_holder(falkordb_store, CONV)
    assert holder is not None and holder["purpose"] == "capture"
    release(falkordb_store, CONV, str(holder["holder"]))
    now[0] += 301 * 10**9
    survivor = LiveRuns(falkordb_store, clock=lambda: now[0])  # recovers trace 2 at start
    survivor.add(traces[2])
    assert survivor.errors == [] and survivor.stored == [CONV]
    case = read_case(falkordb_store, CONV)
    assert [u.content for u in case.session] == ["Q1?", "Q2?", "Q3?"]
    assert [s.content for s in case.trace if s.step_type == "final_answer"] == [
        "A1.", "A2.", "A3."]
