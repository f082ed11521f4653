"""Contamination is never missed on what real agents do (issue 36): every shape of the
generator (benchmark/trace_shapes.py) recorded natively and traced (benchmark/shape_export.py:
the real SDK's OTLP as JSON strings, structured values and protobuf; transcripts with
requests and write evidence, with requests only, plain), read back by the loaders, every
memory record as the single fault: the read-back plan affects every node the native plan
affects. A sample per shape here; bench/trace_soundness.py --shapes runs the corpus.
Then each rule the corpus needs, on a run small enough to read."""

from __future__ import annotations

import json
from typing import Any

import pytest

from provrepair.benchmark.reference import plan_in_memory
from provrepair.benchmark.shape_export import EXPORTS, read_back
from provrepair.benchmark.soundness import check_faults
from provrepair.benchmark.trace_shapes import SHAPES, shape_runs
from provrepair.loaders.openai_messages import transcript_case
from provrepair.loaders.otel import cases_from_spans, otlp_spans
from provrepair.provenance.models import Case

SEED = 36


@pytest.fixture(scope="module")
def runs() -> dict[str, list[Any]]:
    return {name: shape_runs(SEED, 2, [name]) for name in SHAPES}


@pytest.mark.parametrize("export", sorted(EXPORTS))
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_no_fault_is_missed(runs: dict[str, list[Any]], shape: str, export: str) -> None:
    missed, faults = [], 0
    for run in runs[shape]:
        traced = EXPORTS[export](run)
        case = read_back(export, traced, run.case.task_id)
        for check in check_faults(run.case, case, traced.origin):
            faults += 1
            assert check.present, f"{run.case.task_id}: {check.fault} is not in the reading"
            if check.missed:
                missed.append((run.case.task_id, check.fault, check.missed))
    assert faults >= 4 and missed == []


def test_the_check_fails_on_a_reading_that_drops_a_dependency(
        runs: dict[str, list[Any]]) -> None:
    """The soundness check can fail: the sub-agent's answer and the tool results (which
    depend on all the tool's sub-agent did) cut from the parent's reading is a miss."""
    run = runs["subagent_tool"][0]
    traced = EXPORTS["otel-json"](run)
    case = read_back("otel-json", traced, run.case.task_id)
    answer = traced.origin[next(s.step_id for s in run.case.trace if s.content.startswith(
        "Le Potager"))]
    by_source = {v: k for k, v in case.world["provrepair.sources"].items()}
    cut = {by_source[answer]} | {s.step_id for s in case.trace
                                 if s.step_type == "tool_observation"}
    dropped = case.model_copy(update={"trace": [
        s.model_copy(update={"used_ids": [u for u in s.used_ids if u not in cut]})
        for s in case.trace]})
    assert any(c.missed for c in check_faults(run.case, dropped, traced.origin))


# -- the rules, one at a time -----------------------------------------------------------------

TRACE = "ab" * 16


def span(n: int, op: str, **attributes: Any) -> dict[str, Any]:
    return {"traceId": TRACE, "spanId": f"{n:016x}", "startTimeUnixNano": str(1000 * n),
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": op}},
                           *({"key": k, "value": {"stringValue": v if isinstance(v, str)
                                                   else json.dumps(v)}}
                             for k, v in attributes.items())]}


def chat(n: int, inputs: list[dict[str, Any]], text: str, **more: Any) -> dict[str, Any]:
    return span(n, "chat", **{"gen_ai.input.messages": inputs, "gen_ai.output.messages": [
        {"role": "assistant", "parts": [{"type": "text", "content": text},
                                        *more.get("parts", [])]}]})


def read(*spans: dict[str, Any]) -> Case:
    (case,) = cases_from_spans(otlp_spans({"resourceSpans": [{"scopeSpans": [
        {"spans": list(spans)}]}]}, "t"))
    return case


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def step(case: Case, content: str) -> Any:
    return next(s for s in case.trace if s.content == content)


def affected(case: Case, fault: str) -> set[str]:
    return {s.content for s in case.trace
            if s.step_id in set(plan_in_memory(case, [fault])["affected_ids"])}


@pytest.mark.parametrize("role", ["system", "user", "assistant"])
def test_an_earlier_output_shown_again_in_any_role_is_a_dependency(role: str) -> None:
    records = [{"id": "m1", "content": "vegetarian"}]
    case = read(span(1, "search_memory", **{"gen_ai.memory.records": records}),
                chat(2, [user("Where to eat?")], "Le Potager fits."),
                chat(3, [user("Book it."),
                         {"role": role, "parts": [{"type": "text",
                                                   "content": "Researcher: Le Potager fits."}]}],
                     "Booked Le Potager."))
    assert "Booked Le Potager." in affected(case, "m1")


def test_one_memory_operation_is_one_step_whatever_the_number_of_records() -> None:
    case = read(chat(1, [user("Remember these.")], "Noted."),
                span(2, "create_memory", **{"gen_ai.memory.records": [
                    {"id": "a", "content": "likes tea"}, {"id": "b", "content": "has a cat"}]}))
    write = case.trace[-1]
    assert write.step_type == "memory_write" and write.generated_memory_ids == ["a", "b"]
    transcript = transcript_case({"messages": [
        {"role": "user", "content": "Remember these."}, {"role": "assistant", "content": "ok"}],
        "memory_events": [{"after": 1, "op": "create", "records": [
            {"id": "a", "content": "likes tea"}, {"id": "b", "content": "has a cat"}]}]}, "t")
    assert transcript.trace[-1].generated_memory_ids == ["a", "b"]


def test_lineage_on_search_results_makes_the_sources_nodes() -> None:
    case = read(span(1, "search_memory", **{"gen_ai.memory.records": [
        {"id": "sum", "content": "trains, per notes",
         "metadata": {"derived_from": ["n1", "n2"], "supersedes": "old"}}]}),
                chat(2, [user("How do I travel?")], "By train."))
    records = {m.memory_id: m for m in case.memory_store}
    assert records["sum"].derived_from == ["n1", "n2"] and records["sum"].supersedes == "old"
    assert records["old"].status == "superseded"
    assert "By train." in affected(case, "n2")  # a source only `derived_from` names


@pytest.mark.parametrize("failure", ["error status", "silent"])
def test_an_update_that_did_not_take_effect_leaves_no_active_version(failure: str) -> None:
    update = span(3, "update_memory", **{"gen_ai.memory.records": [
        {"id": "addr", "content": "lives in Oslo"}]})
    if failure == "error status":
        update["status"] = {"code": 2, "message": "write refused"}
    case = read(span(1, "search_memory", **{"gen_ai.memory.records": [
        {"id": "addr", "content": "lives in Lyon"}]}),
                chat(2, [user("I moved to Oslo.")], "Updating."), update,
                span(4, "search_memory", **{"gen_ai.memory.records": [
                    {"id": "addr", "content": "lives in Lyon"}]}),
                span(5, "delete_memory", **{"gen_ai.memory.record.id": "addr"}))
    records = {m.memory_id: m for m in case.memory_store}
    assert set(records) == {"addr"}  # no version of an update that never happened
    assert records["addr"].status == "deleted"  # the delete acted on the real record
    assert case.trace[2].invalidated_memory_ids == ["addr"]
    assert case.trace[2].generated_memory_ids == []


def test_reasoning_becomes_a_plan_step_the_output_follows() -> None:
    otel = read(chat(1, [user("Umbrella?")], "Yes.",
                     parts=[{"type": "reasoning", "content": "Bergen is rainy."}]))
    thought, answer = otel.trace
    assert (thought.step_type, thought.content) == ("plan", "Bergen is rainy.")
    assert answer.used_ids == [thought.step_id]
    transcript = transcript_case([{"role": "user", "content": "Umbrella?"},
                                  {"role": "assistant", "content": "Yes.",
                                   "reasoning_content": "Bergen is rainy."}], "t")
    assert [s.step_type for s in transcript.trace] == ["plan", "final_answer"]
    assert transcript.world["provrepair.sources"][transcript.trace[0].step_id] == \
        "messages[1]#reasoning"


def test_a_plain_transcript_reads_records_named_by_id() -> None:
    case = transcript_case([
        {"role": "system", "content": [{"type": "text", "text": "profile",
                                        "memory_record_id": "m_profile"}]},
        {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello, Ann."}], "t")
    assert "m_profile" in case.trace[0].used_ids


def test_agent_ids_shaped_like_ours_keep_their_ids() -> None:
    """Issue 40: an agent naming its records s_002, u_001, m_001~2: a valid transcript and
    trace, each read with our ids allocated around the agent's (provenance/state/memory.py)."""
    raw = {"messages": [{"role": "user", "content": "Hi"},
                        {"role": "assistant", "content": "Hello."},
                        {"role": "user", "content": "Again"},
                        {"role": "assistant", "content": "Yes.", "evidence": ["u_001"]}],
           "memory_events": [
               {"after": 0, "op": "search", "records": [
                   {"id": "s_002", "content": "a"}, {"id": "u_001", "content": "b"},
                   {"id": "m_001~2", "content": "c"}, {"id": "m_001", "content": "d"}]},
               {"after": 1, "op": "update", "id": "m_001", "content": "e"}]}
    case = transcript_case(raw, "t")
    ids = [u.input_id for u in case.session] + [s.step_id for s in case.trace]
    assert ids == ["u_002", "u_003", "s_001", "s_003", "s_004", "s_005"]
    records = {m.memory_id: m for m in case.memory_store}
    assert records["m_001~3"].record_id == "m_001" and records["s_002"].content == "a"
    assert case.trace[-1].used_ids == ["u_001"]  # the agent's record, not our input
    otel = read(span(1, "search_memory", **{"gen_ai.memory.records": [
        {"id": "s_001", "content": "a"}, {"id": "u_001", "content": "b"}]}),
                chat(2, [user("Hi")], "Hello."),
                span(3, "update_memory", **{"gen_ai.memory.records": [
                    {"id": "s_001", "content": "a2"}]}))
    assert [s.step_id for s in otel.trace] == ["s_002", "s_003", "s_004"]
    assert [u.input_id for u in otel.session] == ["u_002"]
    assert {m.memory_id for m in otel.memory_store} == {"s_001", "u_001", "s_001~2"}


def test_an_openinference_retriever_reads_lineage_from_document_metadata() -> None:
    from provrepair.loaders.otel_dialects import normalize_document

    retriever = {"traceId": TRACE, "spanId": f"{1:016x}", "startTimeUnixNano": "1000",
                 "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in {
                     "openinference.span.kind": "RETRIEVER", "input.value": "travel",
                     "retrieval.documents.0.document.id": "sum",
                     "retrieval.documents.0.document.content": "trains",
                     "retrieval.documents.0.document.metadata": json.dumps(
                         {"derived_from": ["n1"]})}.items()]}
    (case,) = cases_from_spans(otlp_spans(normalize_document(
        {"resourceSpans": [{"scopeSpans": [{"spans": [retriever]}]}]}), "t"))
    assert {m.memory_id: m.derived_from for m in case.memory_store}["sum"] == ["n1"]
