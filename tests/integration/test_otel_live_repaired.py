"""A trace that arrives after a repair never undoes it, whatever makes live capture read the
conversation again whole (issue 36; loaders/otel_merge.py): another process wrote the task
since, a trace without message content, a span older than those stored, a trace recovered
after a crash. Each time the trace's steps are stored, the deleted fault stays deleted, the
repair's run, marks and replayed nodes stay, and the next plan covers the new steps. Both
engines."""

from __future__ import annotations

import json
from typing import Any

from provrepair.loaders.otel import cases_from_spans, otlp_spans
from provrepair.loaders.otel_merge import REPLAN
from provrepair.loaders.otel_runs import LiveRuns
from provrepair.loaders.otlp_json import attributes_json
from provrepair.provenance.keys import task_key
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan import plan
from provrepair.repair.runs import list_runs, run_key
from provrepair.repair.service import run_repair

TASK = "conv-repaired"
FAULT = "m_price"
T0 = 1_700_000_000 * 10**9  # the traces' times: a recovered trace is read by its age


def request(n: int, children: list[tuple[str, dict[str, Any]]], *, start: int | None = None
            ) -> list[dict[str, Any]]:
    """One request of the conversation as OTLP/JSON: its child spans (as they end), then its
    `invoke_agent` root; request n starts at T0 + n s (`start`: an earlier one)."""
    trace, t0 = f"{n:032x}", T0 + n * 10**9 if start is None else start
    spans = [{"traceId": trace, "spanId": f"{n:08x}{k:08x}", "name": op,
              "parentSpanId": f"{n:08x}{0:08x}", "flags": 0x100,
              "startTimeUnixNano": str(t0 + k * 1000), "endTimeUnixNano": str(t0 + k * 1000 + 1),
              "attributes": attributes_json({"gen_ai.operation.name": op,
                                             "gen_ai.conversation.id": TASK, **attributes})}
             for k, (op, attributes) in enumerate(children, 1)]
    return [*spans, {"traceId": trace, "spanId": f"{n:08x}{0:08x}", "name": "invoke_agent",
                     "startTimeUnixNano": str(t0), "endTimeUnixNano": str(t0 + 99_999),
                     "attributes": attributes_json({"gen_ai.operation.name": "invoke_agent",
                                                    "gen_ai.conversation.id": TASK})}]


def search(price: str = "$5") -> tuple[str, dict[str, Any]]:
    """The agent's memory was not patched yet: its search still returns the fault."""
    return "search_memory", {"gen_ai.memory.records": json.dumps(
        [{"id": FAULT, "content": f"StoreB sells P0199 for {price}"}])}


def chat(question: str, answer: str | None) -> tuple[str, dict[str, Any]]:
    """An inference whose input names the record it was given (what a search since the
    last output returned is in its context anyway); `answer` None: recorded without message
    content."""
    if answer is None:
        return "chat", {}
    return "chat", {"gen_ai.input.messages": json.dumps(
        [{"role": "system", "parts": [{"type": "text", "content": "Notes",
                                       "memory_record_id": FAULT}]},
         {"role": "user", "parts": [{"type": "text", "content": question}]}]),
        "gen_ai.output.messages": json.dumps(
        [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}])}


def test_traces_read_again_whole_after_a_repair_are_merged_never_undo_it(
        store: GraphStore) -> None:
    now, sent = [T0], []
    first = LiveRuns(store, clock=lambda: now[0])
    sent += request(1, [search(), chat("Where is P0199 cheapest?", "StoreB, $5.")])
    first.add(sent)
    run_repair(store, TASK, faults=[FAULT])
    key = task_key(TASK)
    repair = {"runs": list_runs(store, TASK),
              "replayed": sorted(r["props"]["id"] for r in store.run(
                  "list_task_nodes", {"task_key": key}) if "origin_run" in r["props"])}
    assert len(repair["runs"]) == 1 and repair["replayed"]
    marks = sorted(map(str, store.run("list_run_marks", {
        "run_key": run_key(TASK, repair["runs"][0]["run_id"])})))

    def stored_and_planned(answer: str, rebuilt: LiveRuns, rebuilds: int) -> list[str]:
        """The trace was read again whole and merged: its steps are stored and affected by
        the fault; the repair stands."""
        assert rebuilt.errors == [] and rebuilt.rebuilds == rebuilds
        nodes = {r["props"]["id"]: r["props"]
                 for r in store.run("list_task_nodes", {"task_key": key})}
        assert nodes[FAULT]["status"] == "deleted"  # the repair's, whatever the run says
        assert list_runs(store, TASK) == repair["runs"]
        assert set(repair["replayed"]) <= set(nodes)
        assert sorted(map(str, store.run("list_run_marks", {
            "run_key": run_key(TASK, repair["runs"][0]["run_id"])}))) == marks
        case = read_case(store, TASK)
        new = [s.step_id for s in case.trace if s.content == answer]
        assert len(new) == 1  # stored once, not doubled by the re-read
        reads = [s.step_id for s in case.trace if FAULT in s.used_ids]
        affected = set(plan(store, TASK, [FAULT]).affected_ids)
        assert {*new, *reads} <= affected, {*new, *reads} - affected
        return new

    # another process serves the next request: it has no reading of the conversation
    second = LiveRuns(store, clock=lambda: now[0])
    sent += request(2, [search(), chat("Still $5?", "Yes, StoreB at $5.")])
    second.add(sent[-3:])
    stored_and_planned("Yes, StoreB at $5.", second, 1)

    # the first process again: another wrote the task since its reading (capture token)
    sent += request(3, [search(), chat("Sure?", "Sure, $5.")])
    first.add(sent[-3:])
    stored_and_planned("Sure, $5.", first, 2)
    assert first.readings  # the merge was exact: the next request would extend it

    # a request recorded without message content: read again whole, merged
    sent += request(4, [search(), chat("and now?", None)])
    first.add(sent[-3:])
    stored_and_planned("(no output recorded)", first, 3)
    assert first.extensions == 0 and any(
        "message content was not captured" in w
        for w in read_case(store, TASK).world["provrepair.warnings"])

    # a span older than those stored (a request that began before the last one ended): the
    # history reads otherwise; the new steps are stored under new ids, the task says so
    sent += request(5, [search("$4"), chat("Cheaper?", "StoreB at $4.")],
                    start=T0 + 2 * 10**9 + 500)
    first.add(sent[-3:])
    stored_and_planned("StoreB at $4.", first, 4)
    warnings = read_case(store, TASK).world["provrepair.warnings"]
    assert any(w.startswith(REPLAN) and "plan the task again" in w for w in warnings)

    # a capture dies with a request half exported; the next one recovers it
    crashed = LiveRuns(store, clock=lambda: now[0])
    sent += request(6, [search(), chat("Last one?", "Yes, $5.")])[:-1]  # no root
    crashed.add(sent[-2:])
    now[0] += 301 * 10**9
    survivor = LiveRuns(store, clock=lambda: now[0])
    new = stored_and_planned("Yes, $5.", survivor, 1)
    case = read_case(store, TASK)
    assert [u.content for u in case.session] == [
        "Where is P0199 cheapest?", "Still $5?", "Sure?", "Cheaper?", "Last one?"]
    # every element a reading of all the spans has, once: nothing lost, nothing doubled
    (whole,) = cases_from_spans(otlp_spans({"resourceSpans": [{"scopeSpans": [
        {"spans": sent}]}]}, "sent"))
    assert [len(case.session), len(case.memory_store), len(case.trace)] == [
        len(whole.session), len(whole.memory_store), len(whole.trace)]
    assert any(w.startswith(REPLAN) for w in case.world["provrepair.warnings"])  # kept

    # the merged task replays: a dry run of a repair plans and replays its new steps too
    report = run_repair(store, TASK, faults=[FAULT], dry_run=True)
    assert report.status == "dry_run" and set(new) <= set(report.plan["replay_step_ids"])
