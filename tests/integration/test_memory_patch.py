"""The memory patch of a repair, carried to real memory stores (LangGraph's SqliteStore from
langgraph-checkpoint-sqlite, read back through LangGraph's own API; a JSONL memory file)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from langgraph.store.sqlite import SqliteStore

from tests.conftest import Cli
from tests.helpers import EXAMPLE

TASK = "shopping_task_014"
TRANSCRIPT = EXAMPLE.parent / "transcripts" / "shopping_transcript.json"


def agent_store(path: Path) -> SqliteStore:
    store = SqliteStore(sqlite3.connect(path, check_same_thread=False, isolation_level=None))
    store.setup()
    return store


def seeded(path: Path) -> SqliteStore:
    """The agent's own memory before the repair: the case's active records."""
    store = agent_store(path)
    for m in json.loads(EXAMPLE.read_text())["memory_store"]:
        if m["status"] == "active":
            store.put(("memories",), m["memory_id"], {"content": m["content"], "tags": ["x"]})
    return store


def searched(store: SqliteStore) -> dict[str, str]:
    return {item.key: item.value["content"] for item in store.search(("memories",), limit=100)}


def repaired(cli: Cli) -> dict[str, Any]:
    assert cli("ingest", str(EXAMPLE)).returncode == 0
    done = cli("repair", "--task", TASK, "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_patch_lists_the_repair(cli: Cli) -> None:
    report = repaired(cli)
    patch = json.loads(cli("patch", "--task", TASK).stdout)
    assert patch == report["memory_patch"]
    assert patch["run_id"] == report["run_id"]
    ops = [(o["op"], o["memory_id"]) for o in patch["operations"]]
    assert ops == [("delete", "m_f003"), ("add", report["new_memory_ids"][0])]
    added = patch["operations"][1]
    assert added["supersedes"] == "m_f003" and "$63.99" in added["content"]
    listed = json.loads(cli("memory", "--task", TASK, "--json").stdout)
    assert {m["memory_id"] for m in listed} == set(report["active_memory_ids"])
    schema = json.loads(cli("patch", "--schema").stdout)
    assert "operations" in schema["properties"]


def test_apply_to_langgraph_sqlite_then_again(cli: Cli, tmp_path: Path) -> None:
    report = repaired(cli)
    db = tmp_path / "agent.db"
    before = searched(seeded(db))
    assert "m_f003" in before
    done = cli("apply", "--task", TASK, "--to", f"langgraph-sqlite:{db}", "--json")
    assert done.returncode == 0, done.stderr
    after = searched(agent_store(db))
    new_id = report["new_memory_ids"][0]
    assert "m_f003" not in after and "$63.99" in after[new_id]
    assert set(after) == set(report["active_memory_ids"])
    again = json.loads(cli("apply", "--task", TASK, "--to", f"langgraph-sqlite:{db}",
                           "--json").stdout)
    assert again["applied"] == [] and len(again["already_applied"]) == 2
    assert searched(agent_store(db)) == after


def test_a_store_that_changed_since_is_refused(cli: Cli, tmp_path: Path) -> None:
    repaired(cli)
    db = tmp_path / "agent.db"
    store = seeded(db)
    store.put(("memories",), "m_f003", {"content": "P0199 at StoreC: $70.00 (edited later)"})
    before = searched(store)
    done = cli("apply", "--task", TASK, "--to", f"langgraph-sqlite:{db}")
    assert done.returncode == 2
    assert done.stderr.startswith("PatchConflict: ") and "m_f003" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert searched(agent_store(db)) == before  # nothing applied


def test_quarantine_to_a_jsonl_memory_file(cli: Cli, tmp_path: Path) -> None:
    """The transcript's repair quarantines a record written from a poisoned context; offline
    it cannot recompute the answer (no derivations), so it is partial (exit 4)."""
    assert cli("ingest", "--from", "openai-messages", str(TRANSCRIPT)).returncode == 0
    memory = tmp_path / "memory.jsonl"
    memory.write_text("".join(json.dumps({"id": i, "content": c, "status": "active"}) + "\n"
                              for i, c in (("m_price_b", "StoreB sells P0199 for $59.99"),
                                           ("m_price_c", "StoreC sells P0199 for $63.99"),
                                           ("m_best", "Cheapest store for P0199: StoreB"))))
    done = cli("repair", "--task", "transcript_shopping_001")
    assert done.returncode == 4 and "PARTIAL" in done.stdout
    applied = cli("apply", "--task", "transcript_shopping_001", "--to", f"jsonl:{memory}")
    assert applied.returncode == 0, applied.stderr
    records = {r["id"]: r["status"] for r in map(json.loads, memory.read_text().splitlines())}
    assert records == {"m_price_c": "active", "m_best": "quarantined"}


def test_patch_of_a_task_never_repaired(cli: Cli) -> None:
    assert cli("ingest", str(EXAMPLE)).returncode == 0
    done = cli("patch", "--task", TASK)
    assert done.returncode == 2 and done.stderr.startswith("NotRepaired: ")


def test_an_otel_recorded_task_to_langgraph(cli: Cli, tmp_path: Path) -> None:
    """The bundled OTLP trace of the instrumented test agent: repaired offline (partial: a
    trace carries no derivations), its memory carried to a LangGraph store."""
    trace = EXAMPLE.parent / "otel" / "shopping_agent.otlp.jsonl"
    assert cli("ingest", "--from", "otel", str(trace)).returncode == 0
    db = tmp_path / "agent.db"
    store = agent_store(db)
    recorded = json.loads(cli("show", "--task", "otel_shopping_001", "--json").stdout)
    for m in recorded["memory_store"]:
        store.put(("memories",), m["memory_id"], {"content": m["content"]})
    assert cli("repair", "--task", "otel_shopping_001").returncode == 4
    listed = json.loads(cli("memory", "--task", "otel_shopping_001", "--json").stdout)
    assert [m["memory_id"] for m in listed] == ["m_price_c"]
    assert cli("apply", "--task", "otel_shopping_001", "--to",
               f"langgraph-sqlite:{db}").returncode == 0
    assert set(searched(agent_store(db))) == {"m_price_c"}


def test_restore_brings_back_the_record_a_fault_had_superseded(tmp_path: Path) -> None:
    """Every operation of the patch format on a real file store, restore included."""
    from provrepair.repair.appliers import apply_patch
    from provrepair.repair.appliers.jsonl import JsonlMemory
    from provrepair.repair.patch import AddOp, DeleteOp, MemoryPatch, QuarantineOp, RestoreOp

    (tmp_path / "m.jsonl").touch()
    memory = JsonlMemory(tmp_path / "m.jsonl")
    memory.put("m_old", "ship to 1 Elm St")
    memory.quarantine("m_old")   # superseded by the faulty record in the agent's store
    memory.put("m_bad", "ship to 9 Wrong Rd")
    memory.put("m_derived", "label for 9 Wrong Rd")
    patch = MemoryPatch(task_id="t", run_id="r", operations=[
        DeleteOp(op="delete", memory_id="m_bad", expected_content="ship to 9 Wrong Rd"),
        QuarantineOp(op="quarantine", memory_id="m_derived",
                     expected_content="label for 9 Wrong Rd"),
        RestoreOp(op="restore", memory_id="m_old", expected_content="ship to 1 Elm St"),
        AddOp(op="add", memory_id="m_new", content="label for 1 Elm St")])
    first = apply_patch(patch, memory)
    assert len(first.applied) == 4
    assert (memory.get("m_old"), memory.get("m_bad"), memory.get("m_derived"),
            memory.quarantined("m_derived"), memory.get("m_new")) == (
        "ship to 1 Elm St", None, None, "label for 9 Wrong Rd", "label for 1 Elm St")
    again = apply_patch(patch, memory)
    assert again.applied == [] and len(again.already) == 4


def test_apply_to_langgraph_in_memory_store_through_the_api(cli: Cli) -> None:
    """The same patch through the Python call, on LangGraph's InMemoryStore."""
    from langgraph.store.memory import InMemoryStore

    from provrepair.repair.appliers import apply_patch
    from provrepair.repair.appliers.langgraph import LangGraphMemory
    from provrepair.repair.patch import MemoryPatch

    report = repaired(cli)
    patch = MemoryPatch.model_validate(report["memory_patch"])
    store = InMemoryStore()
    for m in json.loads(EXAMPLE.read_text())["memory_store"]:
        if m["status"] == "active":
            store.put(("agent", "memories"), m["memory_id"], {"text": m["content"]})
    memory = LangGraphMemory(store, ("agent", "memories"), value_key="text")
    assert len(apply_patch(patch, memory).applied) == 2
    keys = {item.key for item in store.search(("agent",), limit=100)}
    assert "m_f003" not in keys and report["new_memory_ids"][0] in keys
    listed = json.loads(cli("memory", "--task", TASK, "--all", "--json").stdout)
    why = {m["memory_id"]: m["why"] for m in listed}
    assert why["m_f003"] == "a diagnosed fault (rule 1)" and why["m_001"] == ""
