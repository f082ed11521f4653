"""The namespace patch's merge (repair/namespace_patch.py): one operation per agent record
from the conversations' patches in time order, and keys of a shared memory's records."""

from __future__ import annotations

from typing import Any

from provrepair.provenance.keys import agent_record_key, node_uid, task_key
from provrepair.repair.namespace_patch import merge_patches
from provrepair.repair.patch import MemoryPatch


def patch(run: str, *ops: dict[str, Any], kept: tuple[str, ...] = ()) -> MemoryPatch:
    return MemoryPatch.model_validate({"task_id": run, "run_id": run, "runs": [run],
                                       "kept": [{"memory_id": k, "content": f"text of {k}"}
                                                for k in kept],
                                       "operations": list(ops)})


def op(kind: str, memory_id: str, **fields: Any) -> dict[str, Any]:
    if kind in ("delete", "quarantine", "restore", "put"):
        fields.setdefault("expected_content", "old")
    if kind in ("put", "add"):
        fields.setdefault("content", "new")
    return {"op": kind, "memory_id": memory_id, **fields}


def summary(merged: MemoryPatch) -> list[tuple[str, str, str | None]]:
    return [(o.op, o.memory_id, getattr(o, "content", None)) for o in merged.operations]


def test_a_rewrite_beats_a_removal_and_the_latest_rewrite_wins() -> None:
    first = patch("r1", op("quarantine", "note"), op("put", "city", content="Lisbon"),
                  op("delete", "fault"), kept=("other",))
    later = patch("r2", op("put", "note", content="note on Lisbon"),
                  op("put", "city", content="Porto"), op("quarantine", "fault"),
                  kept=("other2",))
    merged = merge_patches("namespace:u", "ns-run", [first, later])
    assert summary(merged) == [("delete", "fault", None), ("put", "city", "Porto"),
                               ("put", "note", "note on Lisbon")]
    assert merged.kept_ids == ["other", "other2"] and merged.runs == ["r1", "r2"]
    assert merged.task_id == "namespace:u" and merged.run_id == "ns-run"


def test_a_carried_rewrite_keeps_the_writers_operation() -> None:
    writer = patch("r1", op("add", "m_n3", content="note", produced_by="s_2@x"))
    reader = patch("r2", op("add", "m_n3", content="note"))
    merged = merge_patches("namespace:u", "ns", [writer, reader])
    assert merged.operations[0].produced_by == "s_2@x"  # type: ignore[union-attr]


def test_a_later_replay_deleting_the_rewrite_it_read_beats_the_rewrite() -> None:
    writer = patch("r1", op("put", "note", content="note on Lisbon"))
    deleted = patch("r2", op("delete", "note", expected_content="note on Lisbon"))
    assert summary(merge_patches("n", "r", [writer, deleted])) == [("delete", "note", None)]
    # a delete of the record as recorded (the fault, read before the rewrite) does not
    fault = patch("r2", op("delete", "note", expected_content="note on Lyon"))
    assert summary(merge_patches("n", "r", [writer, fault])) == [
        ("put", "note", "note on Lisbon")]


def test_the_merge_depends_on_time_order_not_on_repair_order() -> None:
    """Each conversation's patch is what its repair committed; whichever was repaired first,
    the merge reads them in the conversations' time order."""
    a = patch("ra", op("quarantine", "x"), op("add", "m_n1", content="v1"))
    b = patch("rb", op("quarantine", "x"), op("add", "m_n1", content="v1"))
    assert summary(merge_patches("n", "r", [a, b])) == summary(merge_patches("n", "r", [b, a]))


def test_record_keys_are_injective_and_never_task_keys() -> None:
    keys = {agent_record_key(ns, rid) for ns, rid in
            [("a/b", "c"), ("a", "b/c"), ("a", "b"), ("a ", "b"), ("@a", "b")]}
    assert len(keys) == 5
    assert not any(k.startswith(task_key("x")[0]) for k in keys)
    assert agent_record_key("a", "b") != node_uid(task_key("a"), "b")
