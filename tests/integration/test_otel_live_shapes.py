"""Live capture and file ingest agree on every shape, and live capture never drops a request
(issue 36; loaders/otel_runs.py). One conversation doing every shape of the generator
(benchmark/trace_shapes.py: several records per operation, consolidations, lineage on search
results, sub-agents nested and in linked traces answering through tool results, system and
user messages, parallel calls, failed updates, reasoning, memory in the system prompt), its
spans made by the real SDK and exported one by one as they end, is captured live — alone,
and while another writer holds the conversation and replaces it — and the stored task equals
the same spans ingested from a file, node for node and edge for edge. A trace arriving after
a repair keeps the repair's statuses; content capture off and calls outside any agent run are
read the same way live and from a file."""

from __future__ import annotations

import json
from typing import Any

from provrepair.benchmark.shape_export import otel_spans
from provrepair.benchmark.trace_shapes import all_shapes_run
from provrepair.loaders.otel import cases_from_spans, otlp_spans
from provrepair.loaders.otel_live import otlp_json, otlp_span
from provrepair.loaders.otel_runs import LiveRuns
from provrepair.loaders.otlp_json import attributes_json
from provrepair.provenance.ingest import delete_task, ingest_case, ingest_cases, list_tasks
from provrepair.provenance.keys import task_key
from provrepair.provenance.lock import new_owner_id, task_lock
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan import plan
from provrepair.repair.service import run_repair
from tests.integration.test_otel_live_extend import snapshot as task_snapshot

# how the task was written, not what it holds (`warnings` is compared: file ingest and live
# capture both write it)
WRITE_ONLY = {"content_hash", "capture_token", "complete", "ingested_at"}


def snapshot(store: GraphStore, task: str) -> tuple[dict[str, Any], list[Any], list[Any]]:
    return task_snapshot(store, task, WRITE_ONLY)


def from_file(store: GraphStore, spans: list[dict[str, Any]]) -> None:
    """The same spans as `ingest --from otel` reads a file of them."""
    for case in cases_from_spans(otlp_spans({"resourceSpans": [{"scopeSpans": [
            {"spans": spans}]}]}, "file")):
        delete_task(store, case.task_id)
        ingest_cases(store, [case])


def test_every_shape_live_equals_the_file_even_while_another_writer_replaces_it(
        falkordb_store: GraphStore) -> None:
    run = all_shapes_run(36)
    task = run.case.task_id
    sdk_spans, _ = otel_spans(run)
    spans = [otlp_span(s) for s in sdk_spans]  # in the order they ended: one export each
    roots = [i for i, s in enumerate(spans) if "parentSpanId" not in s]
    alone = LiveRuns(falkordb_store)
    for span in spans:
        alone.add([span])
    alone.finish()
    assert alone.errors == [] and alone.stored == [task] and alone.extensions > 0
    live = snapshot(falkordb_store, task)
    from_file(falkordb_store, spans)
    assert snapshot(falkordb_store, task) == live
    assert json.loads(live[0]["world_json"])["provrepair.sources"]  # read, not empty

    # again, while another writer holds the conversation through several requests and
    # replaces it with another version: every request is stored, in order, from the journal
    delete_task(falkordb_store, task)
    capture = LiveRuns(falkordb_store)
    held_from, held_to = roots[1], roots[4]
    for span in spans[:held_from]:
        capture.add([span])
    with task_lock(falkordb_store, task, new_owner_id("ingest"), "ingest"):
        for span in spans[held_from:held_to + 1]:
            capture.add([span])
        assert len(capture.retry) >= 2  # waiting, in order, not dropped
        assert capture.errors == []
    older = cases_from_spans(otlp_spans(otlp_json(sdk_spans[:held_from]), "older"))[0]
    ingest_case(falkordb_store, older, replace=True)  # the other writer's version
    for span in spans[held_to + 1:]:
        capture.add([span])
    capture.finish()
    assert capture.errors == [] and capture.retry == {}
    assert snapshot(falkordb_store, task) == live
    stored = iter(u.content for u in read_case(falkordb_store, task).session)
    assert all(e.text in stored for e in run.log if e.kind == "user")  # each, in order


TRACE = "cd" * 16


def trace_spans(n: int, *children: tuple[str, dict[str, Any]],
                conversation: str | None = "conv-repair") -> list[dict[str, Any]]:
    """One request: its spans (children first, as they end), then the root."""
    trace = f"{n:032x}"
    extra = {"gen_ai.conversation.id": conversation} if conversation else {}
    out = []
    for k, (op, attributes) in enumerate(children, 1):
        out.append({"traceId": trace, "spanId": f"{n:08x}{k:08x}", "name": op,
                    "parentSpanId": f"{n:08x}{0:08x}", "flags": 0x100,
                    "startTimeUnixNano": str(n * 10**6 + k * 1000),
                    "endTimeUnixNano": str(n * 10**6 + k * 1000 + 1),
                    "attributes": attributes_json({"gen_ai.operation.name": op, **extra,
                                                   **attributes})})
    out.append({"traceId": trace, "spanId": f"{n:08x}{0:08x}", "name": "invoke_agent",
                "startTimeUnixNano": str(n * 10**6), "endTimeUnixNano": str(n * 10**6 + 9999),
                "attributes": attributes_json({"gen_ai.operation.name": "invoke_agent",
                                               **extra})})
    return out


def chat(question: str, answer: str) -> tuple[str, dict[str, Any]]:
    return "chat", {"gen_ai.input.messages": json.dumps(
        [{"role": "user", "parts": [{"type": "text", "content": question}]}]),
        "gen_ai.output.messages": json.dumps(
        [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}])}


def test_a_trace_after_a_repair_keeps_the_repairs_statuses(store: GraphStore) -> None:
    """The fault is deleted by the repair; the agent's next request updates the record (its
    store was not patched yet): the fault stays deleted, what the run did is recorded beside
    it and as a step, and the next plan reaches the new version through that step."""
    capture = LiveRuns(store)
    capture.add(trace_spans(1, ("search_memory", {"gen_ai.memory.records": json.dumps(
        [{"id": "m_price", "content": "StoreB sells P0199 for $5"}])}),
        chat("Where is P0199 cheapest?", "StoreB, $5.")))
    run_repair(store, "conv-repair", faults=["m_price"])
    before = {m.memory_id: m.status for m in read_case(store, "conv-repair").memory_store}
    assert before["m_price"] == "deleted"
    capture.add(trace_spans(2, chat("Update the price.", "Updated: $6."),
                            ("update_memory", {"gen_ai.memory.records": json.dumps(
                                [{"id": "m_price", "content": "StoreB sells P0199 for $6"}])})))
    assert capture.errors == [] and capture.extensions == 1
    nodes = {r["props"]["id"]: r["props"] for r in
             store.run("list_task_nodes", {"task_key": task_key("conv-repair")})}
    assert nodes["m_price"]["status"] == "deleted"  # the repair's, not the run's
    assert nodes["m_price"]["status_recorded"] == "superseded"  # what the run did, kept
    assert nodes["m_price~2"]["status"] == "active"
    affected = set(plan(store, "conv-repair", ["m_price"]).affected_ids)
    assert "m_price~2" in affected


def test_content_off_and_calls_outside_runs_read_alike_live_and_from_a_file(
        falkordb_store: GraphStore) -> None:
    """An inference without message content: stored with a warning, live as from a file.
    An LLM call outside any agent run: a task of its trace, live as from a file (nothing
    dropped). A trace that makes no step (embeddings only): no task in either."""
    blind = trace_spans(1, ("chat", {}), ("execute_tool", {"gen_ai.tool.call.id": "c1",
                                                           "gen_ai.tool.call.result": "ok"}))
    outside = [{**s, "traceId": "ef" * 16} for s in trace_spans(
        2, chat("hi", "hello"), conversation=None) if s["name"] == "chat"]
    outside[0].pop("parentSpanId"), outside[0].pop("flags")
    nothing = [{**s, "traceId": "12" * 16} for s in trace_spans(3, ("embeddings", {}),
                                                                conversation=None)]
    capture = LiveRuns(falkordb_store)
    for span in [*blind, *outside, *nothing]:
        capture.add([span])
    capture.finish()
    tasks = sorted(t["task_id"] for t in list_tasks(falkordb_store))
    assert tasks == ["conv-repair", f"trace-{'ef' * 16}"] and capture.errors == []
    live = {t: snapshot(falkordb_store, t) for t in tasks}
    assert any("message content was not captured" in w
               for w in live["conv-repair"][0]["warnings"])
    from_file(falkordb_store, [*blind, *outside, *nothing])
    assert {t: snapshot(falkordb_store, t) for t in tasks} == live
    assert sorted(t["task_id"] for t in list_tasks(falkordb_store)) == tasks
