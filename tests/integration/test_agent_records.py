"""One record of a shared memory across conversations (provenance/agent_records.py): every
writer links a namespace's memory nodes to their `:AgentRecord` and gives the task its time —
ingest (staged, with the swap), the Recorder as it flushes, `db migrate` for tasks stored
before — and a replaced version leaves no link of the old one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from provrepair.provenance.agent_records import backfill_agent_records
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.keys import LIVE_PREFIX, agent_record_key, task_key
from provrepair.provenance.models import Case
from provrepair.provenance.readback import get_task_props
from provrepair.provenance.recorder import Recorder
from provrepair.provenance.rows import group_node_rows, memory_row, step_row, task_props
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "namespace"


def conversation(name: str) -> Case:
    return parse_case(json.loads((EXAMPLES / f"{name}.json").read_text()))


def holders(store: GraphStore, record: str) -> list[tuple[str, str, bool]]:
    rows = store.run("list_record_holders", {"record_keys": [agent_record_key("user-42", record)],
                                             "live_prefix": LIVE_PREFIX})
    return sorted((r["task_id"], r["id"], r["produced"]) for r in rows)


def test_ingest_links_each_record_once_and_a_replace_relinks(falkordb_store: GraphStore) -> None:
    for name in ("conv_00", "conv_01", "conv_02"):
        ingest_case(falkordb_store, conversation(name))
    assert holders(falkordb_store, "m_home_city") == [
        ("conv_00", "m_home_city", True), ("conv_01", "m_home_city", False),
        ("conv_02", "m_home_city", False)]
    assert holders(falkordb_store, "m_planted") == [("conv_01", "m_planted", False),
                                                    ("conv_02", "m_planted", False)]
    assert get_task_props(falkordb_store, "conv_01")["started_at"] == 1001
    replaced = conversation("conv_02").model_dump(mode="json")
    replaced["session"][0]["content"] = "Make a note about my home city, please."
    ingest_case(falkordb_store, parse_case(replaced), replace=True)
    assert holders(falkordb_store, "m_planted") == [("conv_01", "m_planted", False),
                                                    ("conv_02", "m_planted", False)]


def test_the_recorder_links_as_it_flushes(falkordb_store: GraphStore) -> None:
    case = conversation("conv_01")
    with Recorder(falkordb_store, "live_01", domain="assistant", memory_namespace="user-42",
                  batch_size=1) as rec:
        for memory in case.memory_store:
            rec.memory(memory.model_copy(update={"task_id": "live_01"}))
        for user_input in case.session:
            rec.user_input(user_input.model_copy(update={"task_id": "live_01"}))
        rec.flush()
        assert ("live_01", "m_planted", False) in holders(falkordb_store, "m_planted")
        for step in case.trace:
            rec.step(step.model_copy(update={"task_id": "live_01"}))
    assert get_task_props(falkordb_store, "live_01")["started_at"] == 1001


def test_db_migrate_links_tasks_stored_before(falkordb_store: GraphStore) -> None:
    """A task written as before this existed (nodes, no links, no time): the migration's
    back-fill links it, once."""
    case = conversation("conv_01")
    key = task_key(case.task_id)
    falkordb_store.run("merge_task", {"task_key": key,
                                      "props": task_props(case, "hash", complete=True)})
    rows: list[dict[str, Any]] = [memory_row(key, m, i) for i, m in enumerate(case.memory_store)]
    rows += [step_row(key, s, i) for i, s in enumerate(case.trace)]
    for name, group in group_node_rows(rows).items():
        falkordb_store.run(name, {"rows": group})
    assert holders(falkordb_store, "m_planted") == []
    assert backfill_agent_records(falkordb_store) == 1
    assert holders(falkordb_store, "m_planted") == [("conv_01", "m_planted", False)]
    assert get_task_props(falkordb_store, "conv_01")["started_at"] == 1002
    assert backfill_agent_records(falkordb_store) == 0
