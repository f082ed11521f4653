"""A task's memory namespace (the case format's `memory_namespace`): in the exported schema,
absent from a case that has none (its dump and hash as before), refused empty, and set by the
loaders from where their input says it (a transcript's top-level field; OTel attributes)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from provrepair.loaders.agent_run import WARNINGS
from provrepair.loaders.openai_messages import transcript_case
from provrepair.loaders.otel import Span, cases_from_spans
from provrepair.provenance.errors import CaseError
from provrepair.provenance.ingest import content_hash
from provrepair.provenance.models import case_json_schema
from provrepair.provenance.validate import parse_case
from tests.helpers import example_raw

MESSAGES = [{"role": "user", "content": "price of P0199?"},
            {"role": "assistant", "content": "$68.50"}]


def test_the_schema_has_the_field_and_a_case_without_it_dumps_as_before() -> None:
    field = case_json_schema()["properties"]["memory_namespace"]
    assert "memory_namespace" not in case_json_schema()["required"]
    assert {"type": "string", "minLength": 1} in field["anyOf"]
    raw = example_raw()
    plain = parse_case(raw)
    assert "memory_namespace" not in plain.model_dump(mode="json")
    named = parse_case({**raw, "memory_namespace": "user-42"})
    assert named.model_dump(mode="json")["memory_namespace"] == "user-42"
    assert content_hash(named) != content_hash(plain)  # a new version of the task
    assert parse_case(json.loads(json.dumps(named.model_dump(mode="json")))) == named


@pytest.mark.parametrize("bad", ["", 42])
def test_an_empty_or_non_string_namespace_is_refused(bad: Any) -> None:
    with pytest.raises(CaseError, match="memory_namespace"):
        parse_case({**example_raw(), "memory_namespace": bad})
    with pytest.raises(CaseError, match="memory_namespace"):
        transcript_case({"messages": MESSAGES, "memory_namespace": bad}, "t1")


def test_a_transcript_names_its_namespace_at_the_top() -> None:
    assert transcript_case({"messages": MESSAGES, "memory_namespace": "user-42"},
                           "t1").memory_namespace == "user-42"
    assert transcript_case(MESSAGES, "t1").memory_namespace is None


def chat(n: int, **attrs: Any) -> Span:
    messages = [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "hello"}]}]
    return Span("ab" * 16, f"{n:016x}", 1000 * n, {
        "gen_ai.operation.name": "chat", "gen_ai.conversation.id": "conv-1",
        "gen_ai.input.messages": json.dumps(messages),
        "gen_ai.output.messages": json.dumps(answer), **attrs})


def test_otel_runs_name_their_namespace_explicitly_or_by_memory_store() -> None:
    (plain,) = cases_from_spans([chat(1)])
    assert plain.memory_namespace is None
    (by_store,) = cases_from_spans([chat(1), chat(2, **{"gen_ai.memory.store.id": "mem-9"})])
    assert by_store.memory_namespace == "mem-9"
    (explicit,) = cases_from_spans([chat(1, **{"gen_ai.memory.store.id": "mem-9"}),
                                    chat(2, **{"provrepair.memory_namespace": "user-42"})])
    assert explicit.memory_namespace == "user-42"
    assert WARNINGS not in explicit.world


def test_otel_run_naming_two_namespaces_keeps_the_first_and_says_so() -> None:
    (case,) = cases_from_spans([chat(1, **{"provrepair.memory_namespace": "user-42"}),
                                chat(2, **{"provrepair.memory_namespace": "user-7"})])
    assert case.memory_namespace == "user-42"
    assert any("more than one memory namespace" in w and "user-7" in w
               for w in case.world[WARNINGS])
