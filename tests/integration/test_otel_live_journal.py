"""Live capture keeps every span of a run (issue 36): a span ending after its trace's root
(a background memory write, without a conversation id) joins the stored task; spans whose
journal write fails are kept and written at the next export, or, at the end of the capture,
the task says it lacks them. The real embedded store behind a wrapper that fails its journal
writes on demand (no mock: every other call reaches the database)."""

from __future__ import annotations

import json
import time
from typing import Any

from provrepair.loaders.otel_runs import LiveRuns
from provrepair.provenance.errors import StoreUnavailable
from provrepair.provenance.ingest import list_tasks
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from tests.integration.test_otel_subagent_traces import span

TRACE = "d" * 32
USER = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "q"}]}])
ANSWER = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "answer"}]}])


def records(record_id: str, content: str) -> str:
    return json.dumps([{"id": record_id, "content": content}])


class FailingJournal:
    """The store, whose journal writes (`append_capture_spans`) fail with StoreUnavailable
    while `failing(rows)` says so."""

    def __init__(self, store: GraphStore, failing: Any):
        self.store, self.failing = store, failing

    def run(self, name: str, params: dict[str, Any] | None = None) -> Any:
        if name == "append_capture_spans" and self.failing((params or {})["rows"]):
            raise StoreUnavailable("the store is away")
        return self.store.run(name, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def turn(t0: int) -> list[dict[str, Any]]:
    return [span(TRACE, "d2", "chat", t0 + 2, parent="d0", **{
                "gen_ai.input.messages": USER, "gen_ai.output.messages": ANSWER}),
            span(TRACE, "d0", "invoke_agent a", t0, **{"gen_ai.conversation.id": "conv-j"})]


def poison(t0: int) -> dict[str, Any]:
    return span(TRACE, "d1", "search_memory", t0 + 1, parent="d0", **{
        "gen_ai.memory.records": records("m_poison", "poison")})


def test_a_span_ending_after_its_traces_root_joins_the_stored_task(
        falkordb_store: GraphStore) -> None:
    runs = LiveRuns(falkordb_store)
    t0 = time.time_ns()
    runs.add(turn(t0))
    runs.add([span(TRACE, "d3", "create_memory", t0 + 5, parent="d0",
                   **{"gen_ai.memory.records": records("m_bg", "user said q")})])
    assert runs.stored == ["conv-j"] and runs.errors == []
    assert [t["task_id"] for t in list_tasks(falkordb_store)] == ["conv-j"]
    assert "m_bg" in {m.memory_id for m in read_case(falkordb_store, "conv-j").memory_store}


def test_spans_whose_journal_write_failed_are_written_at_the_next_export(
        falkordb_store: GraphStore) -> None:
    failures = [1]

    def once(rows: list[Any]) -> bool:
        failures[0] -= 1
        return failures[0] >= 0

    runs = LiveRuns(FailingJournal(falkordb_store, once))  # type: ignore[arg-type]
    t0 = time.time_ns()
    runs.add([poison(t0)])  # its journal write fails: kept
    runs.add(turn(t0))
    case = read_case(falkordb_store, "conv-j")
    assert "m_poison" in {m.memory_id for m in case.memory_store}
    assert not case.world.get("provrepair.warnings")


def test_spans_never_journaled_leave_a_warning_on_the_task(falkordb_store: GraphStore) -> None:
    runs = LiveRuns(FailingJournal(  # type: ignore[arg-type]
        falkordb_store, lambda rows: any(r["span_key"].endswith("/d1") for r in rows)))
    t0 = time.time_ns()
    runs.add([poison(t0)])
    runs.add(turn(t0))
    assert runs.stored == []  # the trace waits for its journal
    runs.finish()
    assert runs.stored == ["conv-j"]
    warnings = read_case(falkordb_store, "conv-j").world["provrepair.warnings"]
    assert any("1 span(s) of trace" in w and "could not be written to the capture journal"
               in w for w in warnings)
