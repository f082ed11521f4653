"""A sub-agent whose `invoke_agent` span is in a trace of its own, linked to its parent's span,
joins the parent's run: in live capture (even when its trace ends first, or another process
stored the parent) and in file ingest alike; when the parent never arrives it is stored as a
task of its own, with a warning. The real SDK and `openai` client on the test double, the
real embedded store."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from opentelemetry.context import Context
from opentelemetry.trace import Link, Tracer

from provrepair.loaders.otel import load_otlp
from provrepair.loaders.otel_live import OtlpJsonFile, ProvrepairSpanExporter
from provrepair.loaders.otel_runs import LiveRuns
from provrepair.loaders.otlp_json import attributes_json
from provrepair.provenance.ingest import delete_task, ingest_cases, list_tasks
from provrepair.provenance.keys import task_key
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from tests.integration.test_otel_live import CONV, answer_with_memory
from tests.integration.test_otel_live_extend import instrumented
from tests.openai_double import Reply

REPLIES = [Reply("P0199: StoreB $59.99"), Reply("Buy at StoreB.")]


def planner(tracer: Tracer, client: Any, ended: list[str]) -> None:
    """The planner's run calls a researcher sub-agent that runs in a new trace, linked to
    the planner's span (and naming a conversation of its own)."""
    with tracer.start_as_current_span("invoke_agent planner") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.conversation.id", CONV)
        with tracer.start_as_current_span("invoke_agent researcher", context=Context(),
                                          links=[Link(root.get_span_context())]) as sub:
            sub.set_attribute("gen_ai.operation.name", "invoke_agent")
            sub.set_attribute("gen_ai.conversation.id", "researcher-7")
            answer_with_memory(tracer, client, [], "Find P0199 prices", {}, "m_research",
                               "researcher-7")
        assert sub.get_span_context().trace_id != root.get_span_context().trace_id
        ended.append("researcher")
        answer_with_memory(tracer, client, [], "Where should I buy P0199?",
                           {"m_research": "P0199: StoreB $59.99"}, "m_decision", CONV)


def snapshot(store: GraphStore) -> tuple[list[str], list[Any]]:
    nodes = sorted(json.dumps(r["props"], sort_keys=True) for r in
                   store.run("list_task_nodes", {"task_key": task_key(CONV)}))
    edges = sorted((r["label"], r["src"], r["dst"]) for r in
                   store.run("list_task_edges", {"task_key": task_key(CONV)}))
    return nodes, edges


def test_a_linked_sub_agent_trace_joins_its_parent_live_and_from_a_file(
        falkordb_store: GraphStore, tmp_path: Path) -> None:
    exporter = ProvrepairSpanExporter(falkordb_store)
    path = tmp_path / "spans.jsonl"
    ended: list[str] = []
    with instrumented([exporter, OtlpJsonFile(path)], REPLIES) as (tracer, client):
        planner(tracer, client, ended)
        assert ended == ["researcher"]
    # the researcher's trace ended first: kept, not stored alone, joined once the parent ended
    assert exporter.errors == [] and exporter.stored == [CONV]
    assert [t["task_id"] for t in list_tasks(falkordb_store)] == [CONV]
    case = read_case(falkordb_store, CONV)
    assert [u.content for u in case.session] == ["Find P0199 prices", "Where should I buy P0199?"]
    assert {"m_research", "m_decision"} <= {m.memory_id for m in case.memory_store}
    assert "provrepair.warnings" not in case.world
    live = snapshot(falkordb_store)
    delete_task(falkordb_store, CONV)
    (from_file,) = load_otlp([path])  # the file's reading joins the same way
    ingest_cases(falkordb_store, [from_file])
    assert snapshot(falkordb_store) == live


def span(trace: str, sid: str, name: str, start: int, *, parent: str | None = None,
         link: tuple[str, str] | None = None, **attributes: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": trace, "spanId": sid, "name": name, "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1), "status": {"code": 0},
        "attributes": attributes_json({"gen_ai.operation.name": name.split()[0], **attributes})}
    if parent:
        out["parentSpanId"], out["flags"] = parent, 0x100
    if link:
        out["links"] = [{"traceId": link[0], "spanId": link[1]}]
    return out


PARENT, CHILD = "a" * 32, "b" * 32


def parent_trace(t0: int) -> list[dict[str, Any]]:
    return [span(PARENT, "a1", "create_memory", t0 + 1, parent="a0",
                 **{"gen_ai.memory.records": json.dumps([{"id": "m_plan", "content": "plan"}])}),
            span(PARENT, "a0", "invoke_agent planner", t0,
                 **{"gen_ai.conversation.id": CONV})]


def child_trace(t0: int) -> list[dict[str, Any]]:
    return [span(CHILD, "b1", "create_memory", t0 + 1, parent="b0",
                 **{"gen_ai.memory.records": json.dumps([{"id": "m_sub", "content": "found"}])}),
            span(CHILD, "b0", "invoke_agent researcher", t0, link=(PARENT, "a0"),
                 **{"gen_ai.conversation.id": "researcher-7"})]


def test_a_sub_agent_trace_joins_a_parent_another_capture_stored(
        falkordb_store: GraphStore) -> None:
    t0 = time.time_ns()
    first = LiveRuns(falkordb_store)
    first.add(parent_trace(t0))
    assert first.stored == [CONV]
    second = LiveRuns(falkordb_store)  # another process: it finds the parent in the journal
    second.add(child_trace(t0 + 10))
    assert second.stored == [CONV] and second.errors == []
    assert {m.memory_id for m in read_case(falkordb_store, CONV).memory_store} == {
        "m_plan", "m_sub"}


def test_a_sub_agent_trace_whose_parent_never_arrives_is_its_own_task_with_a_warning(
        falkordb_store: GraphStore, tmp_path: Path) -> None:
    now = [time.time_ns()]
    runs = LiveRuns(falkordb_store, recover_after_s=60, clock=lambda: now[0])
    runs.add(child_trace(now[0]))
    assert runs.stored == [] and list(runs.children) == [CHILD]  # kept, waiting
    now[0] += 61 * 10**9
    runs.add([])  # the next export, past the bound
    assert runs.stored == ["researcher-7"] and runs.children == {}
    (task,) = list_tasks(falkordb_store)
    assert any(f"links to span a0 of trace {PARENT}, which did not arrive" in w
               for w in task["warnings"])
    # the same trace from a file: a task of its own, and the case says why
    path = tmp_path / "child.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [
        {"spans": child_trace(1)}]}]}) + "\n")
    (case,) = load_otlp([path])
    assert case.task_id == "researcher-7"
    assert any("which is not in the input" in w for w in case.world["provrepair.warnings"])


def test_a_waiting_sub_agent_trace_is_stored_when_the_capture_ends(
        falkordb_store: GraphStore) -> None:
    runs = LiveRuns(falkordb_store)
    runs.add(child_trace(time.time_ns()))
    assert runs.stored == []
    runs.finish()
    assert runs.stored == ["researcher-7"] and runs.errors == []


def test_a_sub_agent_trace_waits_for_a_parent_trace_still_open_here(
        falkordb_store: GraphStore) -> None:
    """The parent's trace is open here (its first step arrived) when the sub-agent's trace
    ends; the parent works on past `recover_after_s`: the sub-agent is not split off."""
    now = [time.time_ns()]
    t0 = now[0]
    runs = LiveRuns(falkordb_store, recover_after_s=60, clock=lambda: now[0])
    first, root = parent_trace(t0)
    runs.add([first])
    runs.add(child_trace(t0 + 2))
    now[0] += 61 * 10**9
    runs.add([])
    assert runs.stored == [] and list(runs.children) == [CHILD]
    runs.add([root])
    assert runs.stored == [CONV] and runs.errors == []
    assert {m.memory_id for m in read_case(falkordb_store, CONV).memory_store} == {
        "m_plan", "m_sub"}
