"""Live capture keeps a conversation whole (loaders/otel_runs.py through the SDK exporter of
loaders/otel_live.py): the real OpenTelemetry SDK, the real `openai` client instrumented by
opentelemetry-instrumentation-openai-v2, against the suite's OpenAI-compatible test double.

A conversation served as several requests (one trace each, possibly by another process) is one
task that each request extends; a sub-agent's run nests in its parent's; an inference span
outside any agent run is a task of its trace, spans making no step are bounded (dropped,
counted, logged); a run without message content is stored with a warning; a crash loses at
most one flush."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest.mock import patch

import openai
import pytest
from opentelemetry import trace
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.trace import Tracer

from provrepair.loaders.otel_live import OtlpJsonFile, ProvrepairSpanExporter, memory_span
from provrepair.loaders.otel_runs import LiveRuns
from provrepair.provenance.ingest import list_tasks
from provrepair.provenance.lock import new_owner_id, task_lock
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from tests import otel_agent
from tests.conftest import Cli
from tests.openai_double import ChatDouble, Reply

CONV = "conv-live-1"


CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


@contextmanager
def agent(exporter: Any, replies: list[str] | list[Reply], *, content: bool = True,
          batch: bool = True) -> Iterator[tuple[Tracer, Any]]:
    """A tracer and an instrumented `openai` client on the test double (scripted replies); the
    provider is shut down (the exporter's shutdown runs) when the block ends. Without
    `content`, the instrumentation's default: no message content on the spans."""
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter) if batch
                                else SimpleSpanProcessor(exporter))
    double = ChatDouble([r if isinstance(r, Reply) else Reply(r) for r in replies])
    client = openai.OpenAI(base_url=double.start(), api_key="test")
    env = {k: v for k, v in os.environ.items() if k != CAPTURE}
    env.update(otel_agent.CONTENT_ON_SPANS if content else
               {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"})
    with patch.dict(os.environ, env, clear=True):
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            yield provider.get_tracer("live-agent"), client
        finally:
            instrumentor.uninstrument()
            double.stop()
            provider.shutdown()


def request(tracer: Tracer, client: Any, history: list[dict[str, Any]], question: str,
            memory: dict[str, str], remember_as: str, conversation: str = CONV) -> None:
    """One request of the conversation: its own trace, rooted at the agent's invoke_agent."""
    with tracer.start_as_current_span("invoke_agent shopper") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.conversation.id", conversation)
        answer_with_memory(tracer, client, history, question, memory, remember_as, conversation)


def answer_with_memory(tracer: Tracer, client: Any, history: list[dict[str, Any]], question: str,
                       memory: dict[str, str], remember_as: str, conversation: str) -> None:
    found = [{"id": k, "content": v} for k, v in sorted(memory.items())]
    with memory_span(tracer, "search_memory", records=found, query=question,
                     conversation_id=conversation):
        pass
    history.append({"role": "user", "content": question})
    notes = {"role": "system", "content": "Notes: " + "; ".join(r["content"] for r in found)}
    answer = client.chat.completions.create(model="double-model",
                                            messages=[notes, *history]).choices[0].message.content
    history.append({"role": "assistant", "content": answer})
    memory[remember_as] = answer
    with memory_span(tracer, "create_memory", record_id=remember_as,
                     records=[{"id": remember_as, "content": answer}],
                     conversation_id=conversation):
        pass


QUESTIONS = ["Where is the P0199 headset cheapest?", "And the P0200 case?"]
ANSWERS = ["StoreB, $59.99.", "StoreC, $12.00."]


def test_a_later_request_extends_the_conversation_in_one_exporter(
        falkordb_store: GraphStore) -> None:
    exporter = ProvrepairSpanExporter(falkordb_store)
    history: list[dict[str, Any]] = []
    memory = {"m_price_b": "StoreB sells P0199 for $59.99"}
    with agent(exporter, ANSWERS) as (tracer, client):
        for n, question in enumerate(QUESTIONS, 1):
            request(tracer, client, history, question, memory, f"m_answer_{n}")
    assert exporter.errors == [] and exporter.stored == [CONV]
    case = read_case(falkordb_store, CONV)
    assert [u.content for u in case.session] == QUESTIONS
    assert [s.content for s in case.trace if s.step_type == "final_answer"] == ANSWERS
    assert {"m_answer_1", "m_answer_2"} <= {m.memory_id for m in case.memory_store}
    assert [t["task_id"] for t in list_tasks(falkordb_store)] == [CONV]


def test_a_request_served_by_another_process_extends_never_replaces(
        falkordb_store: GraphStore) -> None:
    """Two exporters, as two processes serving one request each: the second request's trace is
    added to the first's, read from the store's capture journal."""
    history: list[dict[str, Any]] = []
    memory = {"m_price_b": "StoreB sells P0199 for $59.99"}
    for n, (question, answer) in enumerate(zip(QUESTIONS, ANSWERS, strict=True), 1):
        exporter = ProvrepairSpanExporter(falkordb_store)
        with agent(exporter, [answer]) as (tracer, client):
            request(tracer, client, history, question, memory, f"m_answer_{n}")
        assert exporter.errors == [] and exporter.stored == [CONV]
        case = read_case(falkordb_store, CONV)
        assert [u.content for u in case.session] == QUESTIONS[:n]
    assert [s.content for s in case.trace if s.step_type == "final_answer"] == ANSWERS
    answer_2 = next(s for s in case.trace if s.content == ANSWERS[1])
    # the second answer read the first request's memory: its dependency crosses the requests
    assert "m_answer_1" in answer_2.used_ids


def test_a_sub_agent_nests_in_its_parent_run(falkordb_store: GraphStore) -> None:
    """The sub-agent's invoke_agent span (its own conversation id) ends before its parent's:
    nothing partial is stored, and its steps join the parent's task."""
    exporter = ProvrepairSpanExporter(falkordb_store)
    replies = ["P0199: StoreB $59.99", "Buy at StoreB."]
    with agent(exporter, replies, batch=False) as (tracer, client), \
            tracer.start_as_current_span("invoke_agent planner") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.conversation.id", CONV)
        with tracer.start_as_current_span("invoke_agent researcher") as sub:
            sub.set_attribute("gen_ai.operation.name", "invoke_agent")
            sub.set_attribute("gen_ai.conversation.id", "researcher-7")
            answer_with_memory(tracer, client, [], "Find P0199 prices", {}, "m_research",
                               "researcher-7")
        assert exporter.stored == []  # the sub-agent ended; its parent's run goes on
        answer_with_memory(tracer, client, [], "Where should I buy P0199?",
                           {"m_research": "P0199: StoreB $59.99"}, "m_decision", CONV)
    assert exporter.errors == [] and exporter.stored == [CONV]
    assert [t["task_id"] for t in list_tasks(falkordb_store)] == [CONV]
    case = read_case(falkordb_store, CONV)
    assert [u.content for u in case.session] == ["Find P0199 prices", "Where should I buy P0199?"]
    assert {"m_research", "m_decision"} <= {m.memory_id for m in case.memory_store}


def test_calls_outside_any_run_are_a_task_of_their_trace_and_stepless_spans_are_bounded(
        falkordb_store: GraphStore, caplog: pytest.LogCaptureFixture) -> None:
    """An LLM call outside any agent run is a task of its trace, as `ingest --from otel`
    reads it (issue 36: nothing dropped); spans that make no step (embeddings) of traces not
    ended are kept up to the bound, then dropped, counted and logged."""
    exporter = ProvrepairSpanExporter(falkordb_store, max_unclaimed_spans=2)
    caplog.set_level(logging.WARNING, logger="provrepair.capture")
    with agent(exporter, ["a"], batch=False) as (tracer, client):
        ask = {"model": "double-model", "messages": [{"role": "user", "content": "hi"}]}
        client.chat.completions.create(**ask)  # its own trace: stored when it ends
        (task,) = exporter.stored
        assert task.startswith("trace-") and exporter.dropped_spans == 0
        with tracer.start_as_current_span("GET /embed"):  # a request span, not an agent run
            for _ in range(3):
                with tracer.start_as_current_span("embeddings") as span:
                    span.set_attribute("gen_ai.operation.name", "embeddings")
            assert exporter.dropped_spans == 3  # past the bound, the open trace's spans go
    assert exporter.stored == [task] and [t["task_id"] for t in list_tasks(falkordb_store)] \
        == [task]
    assert [s.content for s in read_case(falkordb_store, task).trace] == ["a"]
    assert falkordb_store.run("list_unassigned_capture", {"written_before": 2**62}) == []
    dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(dropped) == 1 and "max_unclaimed_spans" in dropped[0]


def test_a_run_without_message_content_is_stored_with_a_warning(
        falkordb_store: GraphStore, cli: Cli) -> None:
    """Content capture off (the instrumentation's default): the run is stored, not dropped —
    its memory operations and tool results whose calls were recorded — and the task says so."""
    exporter = ProvrepairSpanExporter(falkordb_store)
    script = otel_agent.example_script("StoreB is cheapest.")  # a tool call, then the answer
    with agent(exporter, script, content=False) as (tracer, client):
        otel_agent.run(tracer, client, dict(otel_agent.EXAMPLE_MEMORY), CONV, [])
    assert exporter.errors == [] and exporter.stored == [CONV]
    (task,) = list_tasks(falkordb_store)
    assert any("message content was not captured on 2 of 2" in w for w in task["warnings"])
    assert any("1 tool result(s) whose call was not captured" in w for w in task["warnings"])
    case = read_case(falkordb_store, CONV)
    assert case.world["provrepair.warnings"] == task["warnings"]  # with the case, and shown
    assert "m_best" in {m.memory_id for m in case.memory_store}
    assert [s.step_type for s in case.trace].count("memory_write") == 1
    listed = cli("tasks")
    assert "message content was not captured" in listed.stdout


def test_a_crash_loses_at_most_the_unexported_flush(falkordb_store: GraphStore) -> None:
    """Spans exported before a crash are in the journal. A capture that starts while they are
    fresh leaves them (their process may be alive); once they are older than recover_after_s,
    a running capture's next export recovers the open run and stores it, saying so."""
    now = [time.time_ns()]
    survivor = LiveRuns(falkordb_store, recover_after_s=60, clock=lambda: now[0])
    crashed = ProvrepairSpanExporter(falkordb_store)
    provider = TracerProvider(shutdown_on_exit=False)  # the process dies: no shutdown
    provider.add_span_processor(SimpleSpanProcessor(crashed))
    tracer = provider.get_tracer("crashing-agent")
    root = tracer.start_span("invoke_agent shopper")  # never ends
    root.set_attribute("gen_ai.operation.name", "invoke_agent")
    root.set_attribute("gen_ai.conversation.id", CONV)
    with trace.use_span(root, end_on_exit=False):
        with memory_span(tracer, "search_memory", records=[{"id": "m1", "content": "x"}],
                         query="q", conversation_id=CONV):
            pass
        with memory_span(tracer, "create_memory", record_id="m2",
                         records=[{"id": "m2", "content": "y"}], conversation_id=CONV):
            pass
    assert crashed.stored == []  # the run never ended; no shutdown either
    assert LiveRuns(falkordb_store, recover_after_s=60).stored == []  # too fresh to take
    now[0] += 61 * 10**9
    survivor.add([])  # its next export
    assert survivor.stored == [CONV] and survivor.errors == []
    case = read_case(falkordb_store, CONV)
    assert {m.memory_id for m in case.memory_store} == {"m1", "m2"}
    (task,) = list_tasks(falkordb_store)
    assert any("recovered after an interrupted capture" in w for w in task["warnings"])


def test_deleting_the_task_deletes_its_journal(falkordb_store: GraphStore, cli: Cli) -> None:
    """A deleted conversation is not brought back by its next request."""
    history: list[dict[str, Any]] = []
    exporter = ProvrepairSpanExporter(falkordb_store)
    with agent(exporter, ANSWERS[:1]) as (tracer, client):
        request(tracer, client, history, QUESTIONS[0], {}, "m_answer_1")
    assert cli("delete", "--task", CONV).returncode == 0
    exporter = ProvrepairSpanExporter(falkordb_store)
    with agent(exporter, ANSWERS[1:]) as (tracer, client):
        request(tracer, client, history, QUESTIONS[1], {}, "m_answer_2")
    case = read_case(falkordb_store, CONV)
    assert [u.content for u in case.session] == QUESTIONS  # the history the request carried
    assert {m.memory_id for m in case.memory_store} == {"m_answer_2"}


def test_a_run_the_task_lock_holds_back_is_stored_at_the_next_export(
        falkordb_store: GraphStore) -> None:
    """A repair holds the task while a request ends: that trace is stored once the lock is
    free (at the next export, here the shutdown), not lost."""
    history: list[dict[str, Any]] = []
    exporter = ProvrepairSpanExporter(falkordb_store)
    with agent(exporter, ANSWERS, batch=False) as (tracer, client):
        request(tracer, client, history, QUESTIONS[0], {}, "m_answer_1")
        with task_lock(falkordb_store, CONV, new_owner_id("repair"), "repair"):
            request(tracer, client, history, QUESTIONS[1], {}, "m_answer_2")
            assert len(exporter.runs.retry) == 1
            assert [u.content for u in read_case(falkordb_store, CONV).session] == QUESTIONS[:1]
    assert exporter.errors == [] and exporter.runs.retry == {}
    assert [u.content for u in read_case(falkordb_store, CONV).session] == QUESTIONS


def test_follow_reads_a_conversation_of_several_requests_as_one_task(cli: Cli,
                                                                     tmp_path: Path) -> None:
    """`ingest --from otel --follow`: the lines a file exporter wrote for two requests of one
    conversation (two traces) are one task, as the live exporter makes it."""
    path = tmp_path / "conversation.jsonl"
    history: list[dict[str, Any]] = []
    with agent(OtlpJsonFile(path), ANSWERS) as (tracer, client):
        for n, question in enumerate(QUESTIONS, 1):
            request(tracer, client, history, question, {}, f"m_answer_{n}")
    done = cli("ingest", "--from", "otel", "--follow", "-", "--json", input=path.read_bytes())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"stored_tasks": [CONV]}
    case = json.loads(cli("show", "--task", CONV, "--original", "--json").stdout)
    assert [u["content"] for u in case["session"]] == QUESTIONS
