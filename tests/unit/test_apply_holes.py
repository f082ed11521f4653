"""The target is this task's memory, and what used to slip through (issue 38): another user's
store reusing the ids, a patch of another memory namespace, a JSONL memory reached through a
symlink, an async store's driver error, a malformed namespace, a patch of the old format. Real
stores (JSONL files, LangGraph's SqliteStore and AsyncSqliteStore), the real console script
for what the user sees."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.errors import ConfigError, InputError, TargetMismatch
from provrepair.repair.appliers import (
    apply_patch,
    apply_patch_async,
    open_memory_store,
    split_namespace,
)
from provrepair.repair.appliers.jsonl import JsonlMemory
from provrepair.repair.appliers.langgraph import AsyncLangGraphMemory, LangGraphMemory
from provrepair.repair.patch import MemoryPatch, parse_patch

# customer A's task: its fault m_003, a refund it recorded, and what it kept
PATCH_A = MemoryPatch.model_validate({
    "task_id": "refunds_a", "run_id": "r", "memory_namespace": "memories/customer-a",
    "kept": [{"memory_id": "m_001", "content": "A: order ORD1 total $120.00"},
             {"memory_id": "m_002", "content": "A: prefers email"}],
    "operations": [
        {"op": "delete", "memory_id": "m_003", "expected_content": "A: refund ORD1 $999"},
        {"op": "add", "memory_id": "m_n004", "content": "A: refund ORD1 $120.00"}]})
STORE_A = {"m_001": "A: order ORD1 total $120.00", "m_002": "A: prefers email",
           "m_003": "A: refund ORD1 $999"}
STORE_B = {"m_001": "B: order ORD7 total $35.00", "m_002": "B: prefers phone"}  # same ids


def jsonl(path: Path, records: dict[str, str]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "content": c, "status": "active"}) + "\n"
                            for i, c in records.items()))
    return path


def active(path: Path) -> dict[str, str]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {r["id"]: r["content"] for r in rows if r["status"] == "active"}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    exe = str(Path(sys.executable).with_name("provrepair"))
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PROVREPAIR_URI": "bolt://127.0.0.1:9"})


def test_another_users_store_with_the_same_ids_is_not_the_target(tmp_path: Path) -> None:
    """Customer B's store holds m_001 and m_002 too: by id it looked like A's memory, and A's
    refund was added to it (exit 0). By content it holds none of A's records."""
    b = jsonl(tmp_path / "b.jsonl", STORE_B)
    with pytest.raises(TargetMismatch, match=r"holds none of the 4 record\(s\) of task "
                                             r"'refunds_a' with the content the task recorded "
                                             r"\('m_001' is there with other content"):
        apply_patch(PATCH_A, JsonlMemory(b))
    assert active(b) == STORE_B
    a = jsonl(tmp_path / "a.jsonl", STORE_A)
    assert apply_patch(PATCH_A, JsonlMemory(a)).applied == ["delete m_003", "add m_n004"]


def test_a_patch_of_another_memory_namespace_is_refused_unless_allowed(tmp_path: Path) -> None:
    from langgraph.store.sqlite import SqliteStore

    store = SqliteStore(sqlite3.connect(tmp_path / "a.db", check_same_thread=False,
                                        isolation_level=None))
    store.setup()
    for key, content in STORE_A.items():  # A's records, in B's namespace (a copy, a mix-up)
        store.put(("memories", "customer-b"), key, {"content": content})
    with pytest.raises(TargetMismatch, match="namespace 'memories/customer-a'; the target is "
                                             "'memories/customer-b'"):
        apply_patch(PATCH_A, LangGraphMemory(store, ("memories", "customer-b")))
    assert store.get(("memories", "customer-b"), "m_003") is not None
    done = apply_patch(PATCH_A, LangGraphMemory(store, ("memories", "customer-b")),
                       allow_other_namespace=True)
    assert done.applied == ["delete m_003", "add m_n004"]


def test_the_cli_names_the_flag_and_refuses_bad_namespaces(tmp_path: Path) -> None:
    saved = tmp_path / "patch.json"
    saved.write_text(PATCH_A.model_dump_json())
    db = tmp_path / "agent.db"
    from langgraph.store.sqlite import SqliteStore

    store = SqliteStore(sqlite3.connect(db, check_same_thread=False, isolation_level=None))
    store.setup()
    store.put(("memories", "customer-b"), "m_001", {"content": STORE_A["m_001"]})
    store.conn.close()
    to = ["apply", "--patch", str(saved), "--to", f"langgraph-sqlite:{db}"]
    for namespace, error in (
            ("memories/customer-b", "TargetMismatch: the patch is of task 'refunds_a', whose "
                                    "memory is namespace 'memories/customer-a'"),
            ("memories//customer-b", "ConfigError: --namespace 'memories//customer-b' has an "
                                     "empty part (part 2)")):
        done = cli(*to, "--namespace", namespace)
        assert done.returncode == 2 and done.stderr.startswith(error), done.stderr
        assert len(done.stderr.splitlines()) == 1
        assert "--allow-other-namespace" in done.stderr or "ConfigError" in done.stderr
    allowed = cli(*to, "--namespace", "memories/customer-b", "--allow-other-namespace", "--json")
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads(allowed.stdout)["applied"] == ["add m_n004"]


def test_a_jsonl_memory_through_a_symlink_is_repaired_where_the_agent_reads_it(
        tmp_path: Path) -> None:
    """The link used to be replaced by the repaired file while the agent's file kept the
    fault, and the next apply said "already in effect". The file behind the link is locked
    and replaced; the link stays a link."""
    (tmp_path / "data").mkdir()
    real = jsonl(tmp_path / "data" / "memory.jsonl", STORE_A)
    link = tmp_path / "memory.jsonl"
    link.symlink_to(real)
    first = open_memory_store(f"jsonl:{link}")
    assert apply_patch(PATCH_A, first).applied == ["delete m_003", "add m_n004"]
    assert link.is_symlink() and link.resolve() == real
    assert active(real) == {"m_001": STORE_A["m_001"], "m_002": STORE_A["m_002"],
                            "m_n004": "A: refund ORD1 $120.00"}
    again = apply_patch(PATCH_A, open_memory_store(f"jsonl:{link}"))
    assert (again.applied, again.already) == ([], ["delete m_003", "add m_n004"])


def test_async_driver_errors_are_the_same_one_line_error_as_sync(tmp_path: Path) -> None:
    """Another connection holds SQLite's write lock and the stores wait for nothing: the
    sync and the async applier both say TargetMismatch, one line (the async one used to leak
    sqlite3.OperationalError)."""
    import aiosqlite
    from langgraph.store.sqlite import SqliteStore
    from langgraph.store.sqlite.aio import AsyncSqliteStore

    db = tmp_path / "a.db"
    setup = SqliteStore(sqlite3.connect(db, check_same_thread=False, isolation_level=None))
    setup.setup()
    for key, content in STORE_A.items():
        setup.put(("memories", "customer-a"), key, {"content": content})
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    errors: list[str] = []
    sync_store = SqliteStore(sqlite3.connect(db, check_same_thread=False, isolation_level=None,
                                             timeout=0))
    with pytest.raises(TargetMismatch) as sync_error:
        apply_patch(PATCH_A, LangGraphMemory(sync_store, ("memories", "customer-a")))
    errors.append(str(sync_error.value))

    async def run() -> None:
        conn = await aiosqlite.connect(db, timeout=0, isolation_level=None)
        store: Any = AsyncSqliteStore(conn)
        store.is_setup = True
        try:
            with pytest.raises(TargetMismatch) as async_error:
                await apply_patch_async(PATCH_A, AsyncLangGraphMemory(
                    store, ("memories", "customer-a")))
            errors.append(str(async_error.value))
        finally:
            await conn.close()
    asyncio.run(run())
    holder.rollback()
    assert errors == ["the memory store cannot take the patch (OperationalError: database is "
                      "locked); nothing written"] * 2


def test_a_patch_of_the_old_format_is_refused_with_the_command_that_remakes_it() -> None:
    old = {"format": "provrepair.memory-patch/1", "task_id": "t", "run_id": "r",
           "kept": ["m_1"], "operations": []}
    with pytest.raises(InputError, match=r"p.json: a provrepair.memory-patch/1 patch .* make "
                                         r"it again with `provrepair patch --task t`"):
        parse_patch(json.dumps(old), "p.json")


def test_namespaces_are_checked_before_anything_is_opened() -> None:
    from langgraph.store.memory import InMemoryStore

    with pytest.raises(ConfigError, match=r"^--namespace '' is empty: give the agent memory's"):
        split_namespace("")
    assert split_namespace("memories/customer-a") == ("memories", "customer-a")
    for namespace, problem in ((("memories", ""), "has an empty part"), ((), "is empty"),
                               (("langgraph", "x"), "starts with 'langgraph'"),
                               (("memories", "customer.b"), "has a '.' in a part")):
        with pytest.raises(ConfigError, match=problem):
            LangGraphMemory(InMemoryStore(), namespace)
