"""OpenTelemetry GenAI traces in: the test agent's `openai` client instrumented by the real
opentelemetry-instrumentation-openai-v2, recorded live through the SDK exporter, and exported
to an OTLP/JSON file then ingested with the CLI; both give the same graph, and its plan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

from provrepair.loaders.otel_live import OtlpJsonFile, ProvrepairSpanExporter
from provrepair.provenance.keys import task_key
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan import plan
from tests import otel_agent
from tests.conftest import Cli
from tests.openai_double import ChatDouble

RUN = "conv-shop-1"
POISONED = {"m_price_b": "StoreB sells P0199 for $59.99", "m_price_c": "StoreC: $63.99"}


def record(exporter: Any, path: Path | None = None) -> ChatDouble:
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    if path is not None:
        provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFile(path)))
    double = ChatDouble(otel_agent.example_script("StoreB is cheapest at $59.99."))
    client = openai.OpenAI(base_url=double.start(), api_key="test")
    try:
        with otel_agent.openai_instrumented(provider):
            otel_agent.run(provider.get_tracer("agent"), client, dict(POISONED), RUN,
                           ["m_price_b"])
    finally:
        double.stop()
        provider.shutdown()
    return double


def snapshot(store: GraphStore) -> tuple[Any, ...]:
    rows = store.run("list_task_nodes", {"task_key": task_key(RUN)})
    nodes = sorted(json.dumps(r["props"], sort_keys=True) for r in rows)
    edges = sorted((r["label"], r["src"], r["dst"]) for r in
                   store.run("list_task_edges", {"task_key": task_key(RUN)}))
    return nodes, edges


def test_live_capture_stores_the_run_and_plans_it(falkordb_store: GraphStore) -> None:
    exporter = ProvrepairSpanExporter(falkordb_store)
    double = record(exporter)
    assert exporter.errors == [] and exporter.stored == [RUN]
    assert len(double.requests) == 2  # the instrumented client really went over the wire
    case = read_case(falkordb_store, RUN)
    assert [s.step_type for s in case.trace] == [
        "memory_read", "plan", "tool_action", "tool_observation", "final_answer", "memory_write"]
    answer = case.trace[4]
    assert answer.content == "StoreB is cheapest at $59.99."  # from the instrumentation's span
    # its input re-sends the first request (which showed the records) and adds the call and
    # its result: it depends on that output and what is new (README "Dependencies")
    assert answer.used_ids == ["s_002", "s_003", "s_004"]
    assert {"m_price_b", "m_price_c"} <= set(case.trace[1].used_ids)
    the_plan = plan(falkordb_store, RUN)
    assert the_plan.delete_memory_ids == ["m_price_b"]
    assert the_plan.quarantine_memory_ids == ["m_best"]  # written from the poisoned context
    assert "m_price_c" not in the_plan.affected_ids


def test_file_export_then_ingest_gives_the_same_graph(falkordb_store: GraphStore, cli: Cli,
                                                      tmp_path: Path) -> None:
    """The case read back is exact (tests/integration/test_store_roundtrip.py), so equal
    read-backs and equal edge counts mean equal graphs."""
    trace = tmp_path / "trace.jsonl"
    record(ProvrepairSpanExporter(falkordb_store), trace)
    live = read_case(falkordb_store, RUN).model_dump(mode="json")
    live_edges = len(snapshot(falkordb_store)[1])
    done = cli("ingest", "--from", "otel", str(trace))
    assert done.returncode == 0, done.stderr
    from_file = json.loads(cli("show", "--task", RUN, "--original", "--json").stdout)
    assert from_file == live
    tasks = json.loads(cli("tasks", "--json").stdout)
    assert [t["task_id"] for t in tasks] == [RUN] and live_edges > 0


@pytest.mark.parametrize(("span", "needle"), [
    ({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "nope"},
     "orphan tool result"),
    ({"gen_ai.operation.name": "chat",
      "gen_ai.input.messages": json.dumps([{"role": "user", "content": "hi"}])},
     "expected GenAI messages"),
    ({"gen_ai.operation.name": "delete_memory"}, "gen_ai.memory.record.id"),
])
def test_bad_traces_are_one_line_and_write_nothing(cli: Cli, tmp_path: Path,
                                                   span: dict[str, Any], needle: str) -> None:
    body = {"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": "ab" * 16, "spanId": "cd" * 8, "name": "x", "startTimeUnixNano": "1000",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in span.items()]}]}]}]}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(body))
    done = cli("ingest", "--from", "otel", str(path))
    assert done.returncode == 2 and needle in done.stderr, done.stderr
    assert "cdcdcdcdcdcdcdcd" in done.stderr and len(done.stderr.splitlines()) == 1
    assert json.loads(cli("tasks", "--json").stdout) == []


def test_truncated_json_and_no_agent_run(cli: Cli, tmp_path: Path) -> None:
    truncated = tmp_path / "t.json"
    truncated.write_text('{"resourceSpans": [')
    done = cli("ingest", "--from", "otel", str(truncated))
    assert done.returncode == 2 and done.stderr.startswith("InputError: ")
    empty = tmp_path / "e.json"
    empty.write_text(json.dumps({"resourceSpans": []}))
    done = cli("ingest", "--from", "otel", str(empty))
    assert done.returncode == 2 and "no agent run" in done.stderr


def test_follow_otlp_json_lines(cli: Cli) -> None:
    """`ingest --from otel --follow -`: each run stored when its invoke_agent span arrives."""
    trace = Path(__file__).resolve().parents[2] / "examples" / "otel" / \
        "shopping_agent.otlp.jsonl"
    done = cli("ingest", "--from", "otel", "--follow", "-", "--json",
               input=trace.read_bytes())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"stored_tasks": ["otel_shopping_001"]}
    whole = cli("show", "--task", "otel_shopping_001", "--original", "--json").stdout
    assert len(json.loads(whole)["trace"]) == 6


def otlp_spans_of(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(name, attributes) of every span in file order: what is left once ids and times go."""
    return [(span["name"], {a["key"]: a["value"] for a in span["attributes"]})
            for line in path.read_text().splitlines()
            for resource in json.loads(line)["resourceSpans"]
            for scope in resource["scopeSpans"] for span in scope["spans"]]


def test_the_bundled_example_is_what_the_instrumented_agent_records(tmp_path: Path) -> None:
    """examples/otel/ was written by `python -m tests.otel_agent`; if the instrumentation or
    the agent changes what it emits, this says so (regenerate the example with that command)."""
    fresh = tmp_path / "fresh.jsonl"
    otel_agent.record_example(fresh)
    bundled = Path(__file__).resolve().parents[2] / "examples" / "otel" / \
        "shopping_agent.otlp.jsonl"
    assert otlp_spans_of(fresh) == otlp_spans_of(bundled)
    assert any(name.startswith("chat") and "gen_ai.output.messages" in attrs
               for name, attrs in otlp_spans_of(bundled))
