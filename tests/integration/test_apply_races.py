"""100 appliers at once, as real processes (forked after the imports, released together by a
barrier; each opens the store itself, as `provrepair apply` does), on one JSONL file and one
LangGraph SqliteStore: the result equals one apply by the console script. Without the lock
(JSONL) or the one transaction (SQLite) records are lost or written twice, and more than one
process reports an operation as applied."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.sqlite import SqliteStore

PROCESSES = 100
RECORDED = {"m_bad": "ship to 9 Wrong Rd", "m_derived": "label for 9 Wrong Rd",
            "m_upd": "home airport: LAX", "m_keep": "prefers aisle seats"}
PATCH = {"format": "provrepair.memory-patch/2", "task_id": "t", "run_id": "r", "runs": ["r"],
         "kept": [{"memory_id": "m_keep", "content": "prefers aisle seats"}], "operations": [
             {"op": "delete", "memory_id": "m_bad", "expected_content": "ship to 9 Wrong Rd"},
             {"op": "quarantine", "memory_id": "m_derived",
              "expected_content": "label for 9 Wrong Rd"},
             {"op": "put", "memory_id": "m_upd", "expected_content": "home airport: LAX",
              "content": "home airport: OAK"},
             {"op": "add", "memory_id": "m_new", "content": "label for 1 Elm St"}]}


def seed_jsonl(path: Path) -> str:
    path.write_text("".join(json.dumps({"id": i, "content": c, "status": "active"}) + "\n"
                            for i, c in RECORDED.items()))
    return f"jsonl:{path}"


def seed_sqlite(path: Path) -> str:
    store = SqliteStore(sqlite3.connect(path, check_same_thread=False, isolation_level=None))
    store.setup()
    for key, content in RECORDED.items():
        store.put(("memories",), key, {"content": content})
    store.conn.close()
    return f"langgraph-sqlite:{path}"


def read_jsonl(target: str) -> Any:
    return sorted(map(json.loads, Path(target.partition(":")[2]).read_text().splitlines()),
                  key=lambda r: r["id"])


def read_sqlite(target: str) -> Any:
    store = SqliteStore(sqlite3.connect(target.partition(":")[2], check_same_thread=False))
    items = store.search((), limit=1000)
    return sorted((i.namespace, i.key, i.value) for i in items)


@pytest.mark.parametrize(("seed", "read"), [(seed_jsonl, read_jsonl),
                                            (seed_sqlite, read_sqlite)], ids=["jsonl", "sqlite"])
def test_concurrent_applies_equal_one_apply(tmp_path: Path, seed: Any, read: Any) -> None:
    patch = tmp_path / "patch.json"
    patch.write_text(json.dumps(PATCH))
    suffix = ".jsonl" if seed is seed_jsonl else ".db"
    once, raced = seed(tmp_path / f"once{suffix}"), seed(tmp_path / f"raced{suffix}")
    exe = str(Path(sys.executable).with_name("provrepair"))
    env = {"PROVREPAIR_URI": "bolt://127.0.0.1:9", "PATH": str(Path(exe).parent)}

    def apply(target: str) -> subprocess.Popen[str]:
        return subprocess.Popen([exe, "apply", "--patch", str(patch), "--to", target, "--json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env)

    single = apply(once).communicate(timeout=120)
    assert len(json.loads(single[0])["applied"]) == 4, single[1]
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(PROCESSES), context.Queue()
    workers = [context.Process(target=_apply_one, args=(str(patch), raced, barrier, results))
               for _ in range(PROCESSES)]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    assert [w.exitcode for w in workers] == [0] * PROCESSES
    assert [o for o in outcomes if isinstance(o, str)] == []  # no error in any process
    applied = [op for o in outcomes for op in o]
    assert sorted(applied) == sorted(f"{o['op']} {o['memory_id']}" for o in PATCH["operations"])
    assert read(raced) == read(once)
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert leftovers == []  # no temporary file left behind


def _apply_one(patch: str, target: str, barrier: Any, results: Any) -> None:
    """One applier process: what `provrepair apply --patch FILE --to TARGET` does."""
    from provrepair.repair.appliers import apply_patch, open_memory_store
    from provrepair.repair.patch import load_patch

    barrier.wait(timeout=300)
    try:
        memory = open_memory_store(target)
        try:
            results.put(apply_patch(load_patch(patch), memory).applied)
        finally:
            memory.close()
    except Exception as exc:  # reported to the test, which fails naming it
        results.put(f"{type(exc).__name__}: {exc}")
