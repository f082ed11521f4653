"""The agent's own ids (docs/case-format.md, "Agent ids"): versions of a record updated in
place are allocated against every id of the task, keep the agent's id in `record_id`, and the
case round trip stays exact; the memory patch format is strict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from provrepair.loaders.openai_messages import transcript_case
from provrepair.provenance.errors import InputError
from provrepair.provenance.state.memory import allocate_id, version_id
from provrepair.provenance.validate import parse_case
from provrepair.repair.patch import parse_patch, patch_json_schema

ROOT = Path(__file__).resolve().parent.parent.parent
TRANSCRIPT = ROOT / "examples" / "transcripts" / "shopping_transcript.json"
IN_PLACE = ROOT / "tests" / "cases" / "replay" / "small_memory_update_in_place.json"


def test_allocated_ids_skip_every_taken_id() -> None:
    taken = {"m_n001", "m_n002", "m_best~2"}
    assert allocate_id("m_n", taken) == "m_n003"
    assert allocate_id("m_n", taken) == "m_n004"  # added to taken: never handed out twice
    assert version_id("m_best", taken) == "m_best~3"
    assert version_id("m_x", taken) == "m_x~2"


def test_a_loader_version_never_takes_a_real_records_id() -> None:
    raw = json.loads(TRANSCRIPT.read_text())
    raw["memory_events"] += [
        {"after": 5, "op": "create", "id": "m_best~2", "content": "a real record"},
        {"after": 5, "op": "update", "id": "m_best", "content": "Cheapest: StoreC"},
        {"after": 6, "op": "search", "query": "q", "records": [
            {"id": "m_best", "content": "Cheapest: StoreC"},
            {"id": "m_best~2", "content": "a real record"}]}]
    case = transcript_case(raw, "t")
    records = {m.memory_id: m for m in case.memory_store}
    assert records["m_best~2"].content == "a real record" and records["m_best~2"].record_id is None
    version = records["m_best~3"]
    assert (version.record_id, version.supersedes, version.content) == (
        "m_best", "m_best", "Cheapest: StoreC")
    assert records["m_best"].status == "superseded"
    # the read names the version under its allocated id
    assert case.trace[-1].used_ids == ["m_best~3", "m_best~2"]


def test_record_id_round_trips_and_absent_stays_absent() -> None:
    raw = json.loads(IN_PLACE.read_text())
    dumped = parse_case(raw).model_dump(mode="json")
    assert dumped["memory_store"] == [{**m, **_defaults(m)} for m in raw["memory_store"]]
    assert [m.get("record_id") for m in dumped["memory_store"]] == [None, None, "m_001"]
    assert "record_id" not in dumped["memory_store"][0]
    assert parse_case(dumped).model_dump(mode="json") == dumped


def _defaults(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in {"fault_type": None, "trust_score": None, "fact_key": None,
                              "fact_value": None, "entity_id": None,
                              "sufficient_from": []}.items() if k not in record}


def _patch(*operations: dict[str, Any], **top: Any) -> str:
    return json.dumps({"format": "provrepair.memory-patch/2", "task_id": "t", "run_id": "r",
                       "operations": list(operations), **top})


@pytest.mark.parametrize(("operation", "error"), [
    ({"op": "add", "memory_id": "m_1"}, "operations.0.add.content: Field required"),
    ({"op": "put", "memory_id": "m_1", "content": "x"},
     "operations.0.put.expected_content: Field required"),
    ({"op": "delete", "memory_id": "m_1", "expected_content": "x", "note": 1},
     "operations.0.delete.note: Extra inputs are not permitted"),
    ({"op": "rename", "memory_id": "m_1"}, "operations.0: Input tag 'rename'"),
    ({"op": "delete", "memory_id": "", "expected_content": "x"}, "memory_id"),
])
def test_the_patch_schema_is_strict(operation: dict[str, Any], error: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_patch(_patch(operation), "p.json")
    assert str(caught.value).startswith("p.json: not a memory patch")
    assert error in str(caught.value) and "\n" not in str(caught.value)


def test_one_operation_per_record_and_no_unknown_top_level_field() -> None:
    delete = {"op": "delete", "memory_id": "m_1", "expected_content": "x"}
    with pytest.raises(InputError, match="more than one operation"):
        parse_patch(_patch(delete, {**delete, "op": "quarantine"}))
    with pytest.raises(InputError, match="more than one operation"):
        parse_patch(_patch(delete, kept=[{"memory_id": "m_1", "content": "x"}]))
    with pytest.raises(InputError, match="extra"):
        parse_patch(_patch(delete, extra=True))
    assert parse_patch(_patch(delete)).operations[0].op == "delete"


def test_every_object_of_the_schema_is_closed() -> None:
    schema = patch_json_schema()
    objects = [schema, *schema["$defs"].values()]
    assert all(o["additionalProperties"] is False for o in objects)
    required = {name: set(o["required"]) for name, o in schema["$defs"].items()}
    assert required == {"AddOp": {"op", "memory_id", "content"},
                        "PutOp": {"op", "memory_id", "expected_content", "content"},
                        "DeleteOp": {"op", "memory_id", "expected_content"},
                        "QuarantineOp": {"op", "memory_id", "expected_content"},
                        "RestoreOp": {"op", "memory_id", "expected_content"},
                        "KeptRecord": {"memory_id", "content"}}
