"""One applier test body on every LangGraph store an agent may use in production: SqliteStore,
AsyncSqliteStore, PostgresStore and AsyncPostgresStore (a real PostgreSQL server the suite
starts, tests/postgres_server.py), and InMemoryStore. Each store is the agent's own object,
given to `LangGraphMemory` / `AsyncLangGraphMemory`; the results are read back through
LangGraph's API."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.errors import PatchConflict, TargetMismatch
from provrepair.repair.appliers import ApplyResult, apply_patch, apply_patch_async
from provrepair.repair.appliers.langgraph import QUARANTINE, AsyncLangGraphMemory, LangGraphMemory
from provrepair.repair.patch import MemoryPatch
from tests.postgres_server import postgres_bin, running_postgres

NS = ("agent", "memories")
RECORDED = {"m_bad": "ship to 9 Wrong Rd", "m_derived": "label for 9 Wrong Rd",
            "m_upd": "home airport: LAX", "m_keep": "prefers aisle seats"}
PATCH = MemoryPatch.model_validate({
    "task_id": "t", "run_id": "r",
    "kept": [{"memory_id": "m_keep", "content": "prefers aisle seats"}], "operations": [
        {"op": "delete", "memory_id": "m_bad", "expected_content": "ship to 9 Wrong Rd"},
        {"op": "quarantine", "memory_id": "m_derived", "expected_content": "label for 9 Wrong Rd"},
        {"op": "restore", "memory_id": "m_old", "expected_content": "ship to 1 Elm St"},
        {"op": "put", "memory_id": "m_upd", "expected_content": "home airport: LAX",
         "content": "home airport: OAK"},
        {"op": "add", "memory_id": "m_new", "content": "label for 1 Elm St"}]})
LABELS = ["delete m_bad", "quarantine m_derived", "restore m_old", "put m_upd", "add m_new"]


class Agent:
    """The agent's store seen through LangGraph's async API (sync stores wrapped)."""

    def __init__(self, store: Any, is_async: bool):
        self.store, self.is_async = store, is_async

    async def put(self, namespace: tuple[str, ...], key: str, value: dict[str, Any]) -> None:
        if self.is_async:
            await self.store.aput(namespace, key, value)
        else:
            self.store.put(namespace, key, value)

    async def items(self) -> dict[tuple[tuple[str, ...], str], dict[str, Any]]:
        found = await self.store.asearch((), limit=100) if self.is_async \
            else self.store.search((), limit=100)
        return {(tuple(i.namespace), i.key): i.value for i in found}

    async def apply(self, patch: MemoryPatch, namespace: tuple[str, ...] = NS) -> ApplyResult:
        if self.is_async:
            return await apply_patch_async(patch, AsyncLangGraphMemory(self.store, namespace))
        return apply_patch(patch, LangGraphMemory(self.store, namespace))


async def body(agent: Agent) -> None:
    for key, content in RECORDED.items():
        await agent.put(NS, key, {"content": content, "tags": ["agent"]})
    seeded = await agent.items()
    # another namespace: not the agent's memory, nothing written
    with pytest.raises(TargetMismatch, match="holds none"):
        await agent.apply(PATCH, ("other",))
    assert await agent.items() == seeded

    first = await agent.apply(PATCH)
    assert (first.applied, first.already) == (LABELS, [])
    after = await agent.items()
    assert {k: v["content"] for (ns, k), v in after.items() if ns == NS} == {
        "m_keep": "prefers aisle seats", "m_upd": "home airport: OAK",
        "m_old": "ship to 1 Elm St", "m_new": "label for 1 Elm St"}
    assert after[((QUARANTINE, *NS), "m_derived")]["content"] == "label for 9 Wrong Rd"
    assert after[(NS, "m_upd")]["tags"] == ["agent"]  # the agent's other fields are kept

    again = await agent.apply(PATCH)
    assert (again.applied, again.already) == ([], LABELS)
    assert await agent.items() == after

    # a stale expectation anywhere: nothing applied, the pending add included (the kept
    # record tells the agent's memory: it holds what the task recorded)
    stale = MemoryPatch.model_validate({
        "task_id": "t", "run_id": "r2",
        "kept": [{"memory_id": "m_keep", "content": "prefers aisle seats"}], "operations": [
            {"op": "put", "memory_id": "m_upd", "expected_content": "home airport: LAX",
             "content": "home airport: SFO"},
            {"op": "add", "memory_id": "m_other", "content": "x"}]})
    with pytest.raises(PatchConflict, match="put m_upd"):
        await agent.apply(stale)
    assert await agent.items() == after


def run(factory: Callable[[], AbstractAsyncContextManager[Agent]]) -> None:
    async def main() -> None:
        async with factory() as agent:
            await body(agent)
    asyncio.run(main())


def test_sqlite_store(tmp_path: Path) -> None:
    from langgraph.store.sqlite import SqliteStore

    @asynccontextmanager
    async def agent() -> AsyncIterator[Agent]:
        conn = sqlite3.connect(tmp_path / "a.db", check_same_thread=False, isolation_level=None)
        store = SqliteStore(conn)
        store.setup()
        yield Agent(store, is_async=False)
        conn.close()
    run(agent)


def test_async_sqlite_store(tmp_path: Path) -> None:
    from langgraph.store.sqlite.aio import AsyncSqliteStore

    @asynccontextmanager
    async def agent() -> AsyncIterator[Agent]:
        async with AsyncSqliteStore.from_conn_string(str(tmp_path / "a.db")) as store:
            await store.setup()
            yield Agent(store, is_async=True)
    run(agent)


def test_in_memory_store() -> None:
    from langgraph.store.memory import InMemoryStore

    @asynccontextmanager
    async def agent() -> AsyncIterator[Agent]:
        yield Agent(InMemoryStore(), is_async=False)
    run(agent)


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    if postgres_bin() is None:
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) not found: `make postgres` installs "
                    "Debian's postgresql package")
    with running_postgres() as conninfo:
        yield conninfo


@pytest.fixture
def database(postgres: str) -> str:
    """A fresh database of the session's server, for one test."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return postgres.rsplit("/", 1)[0] + f"/{name}"


@pytest.mark.parametrize("pool", [None, {"max_size": 3}], ids=["connection", "pool"])
def test_postgres_store(database: str, pool: Any) -> None:
    from langgraph.store.postgres import PostgresStore

    @asynccontextmanager
    async def agent() -> AsyncIterator[Agent]:
        with PostgresStore.from_conn_string(database, pool_config=pool) as store:
            store.setup()
            yield Agent(store, is_async=False)
    run(agent)


def test_async_postgres_store(database: str) -> None:
    from langgraph.store.postgres.aio import AsyncPostgresStore

    @asynccontextmanager
    async def agent() -> AsyncIterator[Agent]:
        async with AsyncPostgresStore.from_conn_string(database) as store:
            await store.setup()
            yield Agent(store, is_async=True)
    run(agent)


def test_postgres_through_the_cli(database: str, tmp_path: Path) -> None:
    """`apply --patch FILE --to langgraph-postgres:CONNINFO`: the console script opens the
    agent's PostgresStore itself; a database without LangGraph's table is refused."""
    import subprocess
    import sys

    from langgraph.store.postgres import PostgresStore

    saved = tmp_path / "patch.json"
    saved.write_text(PATCH.model_dump_json())
    exe = str(Path(sys.executable).with_name("provrepair"))

    def cli(to: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([exe, "apply", "--patch", str(saved), "--to", to,
                               "--namespace", "/".join(NS), "--json"], capture_output=True,
                              text=True, timeout=120,
                              env={"PROVREPAIR_URI": "bolt://127.0.0.1:9"})

    refused = cli(f"langgraph-postgres:{database}")  # no store table yet
    assert refused.returncode == 2 and refused.stderr.startswith("TargetMismatch: ")
    with PostgresStore.from_conn_string(database) as store:
        store.setup()
        for key, content in RECORDED.items():
            store.put(NS, key, {"content": content})
    done = cli(f"langgraph-postgres:{database}")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["applied"] == LABELS
    with PostgresStore.from_conn_string(database) as store:
        assert store.get(NS, "m_upd").value["content"] == "home airport: OAK"  # type: ignore[union-attr]
        assert store.get(NS, "m_bad") is None
    unreachable = cli("langgraph-postgres:postgresql://nobody@127.0.0.1:9/none")
    assert unreachable.returncode == 2
    assert unreachable.stderr.startswith("TargetMismatch: langgraph-postgres: cannot connect")
    assert len(unreachable.stderr.splitlines()) == 1




def test_postgres_overlapping_applies_all_succeed_as_one_apply(database: str,
                                                               tmp_path: Path) -> None:
    """Two `provrepair apply` processes on one PostgresStore, the first held after its check
    (inside its transaction) until the second is waiting for the namespace's lock: the second
    takes its snapshot only after the first committed, so both exit 0, the first applying
    every operation and the second finding them in effect (the lock used to be taken inside
    the serializable transaction, after its snapshot: the second failed as a conflict)."""
    import subprocess
    import sys
    import time

    import psycopg
    from langgraph.store.postgres import PostgresStore

    from tests.hooked_cli import command

    with PostgresStore.from_conn_string(database) as store:
        store.setup()
        for key, content in RECORDED.items():
            store.put(NS, key, {"content": content})
    saved = tmp_path / "patch.json"
    saved.write_text(PATCH.model_dump_json())
    args = ["apply", "--patch", str(saved), "--to", f"langgraph-postgres:{database}",
            "--namespace", "/".join(NS), "--json"]
    env = {"PROVREPAIR_URI": "bolt://127.0.0.1:9", "PATH": str(Path(sys.executable).parent)}
    first = subprocess.Popen(command(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env={**env, "HOOK_WAIT_AT": "apply_checked",
                                             "HOOK_BARRIER": str(tmp_path)})
    deadline = time.monotonic() + 120
    while not (tmp_path / "apply_checked.reached").exists():  # the first one holds the lock
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.01)
    second = subprocess.Popen([str(Path(sys.executable).with_name("provrepair")), *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    with psycopg.connect(database, autocommit=True) as watcher:
        while not watcher.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                                  "AND NOT granted").fetchone()[0]:  # type: ignore[index]
            assert second.poll() is None and time.monotonic() < deadline, second.communicate()
            time.sleep(0.01)
    (tmp_path / "apply_checked.release").touch()
    outputs = [process.communicate(timeout=120) for process in (first, second)]
    assert [first.returncode, second.returncode] == [0, 0], outputs
    results = [json.loads(out) for out, _ in outputs]
    assert [(r["applied"], r["already_applied"]) for r in results] == [(LABELS, []),
                                                                       ([], LABELS)]
    with PostgresStore.from_conn_string(database) as store:
        assert store.get(NS, "m_upd").value["content"] == "home airport: OAK"  # type: ignore[union-attr]


class Interfering(LangGraphMemory):
    """The agent's store, with the agent writing through its own connection at the worst
    moment: after the applier's check, before its first write."""

    def __init__(self, store: Any, interfere: Callable[[], None]):
        super().__init__(store, NS)
        self.interfere: Callable[[], None] | None = interfere

    def remove(self, memory_id: str) -> None:
        if self.interfere is not None:
            self.interfere, interfere = None, self.interfere
            interfere()
        super().remove(memory_id)


def seed(store: Any) -> None:
    for key, content in RECORDED.items():
        store.put(NS, key, {"content": content})


def contents(store: Any) -> dict[tuple[tuple[str, ...], str], str]:
    return {(tuple(i.namespace), i.key): i.value["content"] for i in store.search((), limit=100)}


def test_sqlite_the_agent_cannot_write_between_check_and_write(tmp_path: Path) -> None:
    """The applier holds SQLite's write lock from its first read: the agent's write waits
    (here: fails at once, with no busy timeout) instead of being overwritten."""
    from langgraph.store.sqlite import SqliteStore

    def store_at(timeout: float) -> SqliteStore:
        conn = sqlite3.connect(tmp_path / "a.db", check_same_thread=False,
                               isolation_level=None, timeout=timeout)
        store = SqliteStore(conn)
        store.setup()
        return store

    applier, agent = store_at(5), store_at(0)
    seed(agent)
    refused: list[str] = []

    def agent_writes() -> None:
        try:
            agent.put(NS, "m_upd", {"content": "home airport: SJC"})
        except sqlite3.OperationalError as exc:
            refused.append(str(exc))
    apply_patch(PATCH, Interfering(applier, agent_writes))
    assert refused == ["database is locked"]
    assert contents(agent)[(NS, "m_upd")] == "home airport: OAK"


def test_postgres_a_write_between_check_and_write_is_a_conflict(database: str) -> None:
    """The agent commits a change to a record the applier checked: the applier's transaction
    fails (serializable), reported as a conflict; the agent's write stays, nothing applied."""
    from langgraph.store.postgres import PostgresStore

    with PostgresStore.from_conn_string(database) as applier, \
            PostgresStore.from_conn_string(database) as agent:
        applier.setup()
        seed(agent)
        before = contents(agent)
        with pytest.raises(PatchConflict, match="concurrent write"):
            apply_patch(PATCH, Interfering(applier, lambda: agent.put(
                NS, "m_bad", {"content": "ship to 10 Right Rd"})))
        assert contents(agent) == {**before, (NS, "m_bad"): "ship to 10 Right Rd"}


def test_jsonl_the_file_is_locked_between_check_and_write(tmp_path: Path) -> None:
    """An agent that locks the memory file as the applier does cannot write in between."""
    import fcntl

    from provrepair.repair.appliers.jsonl import JsonlMemory

    path = tmp_path / "memory.jsonl"
    path.write_text("".join(json.dumps({"id": k, "content": c, "status": "active"}) + "\n"
                            for k, c in RECORDED.items()))
    blocked: list[bool] = []

    class Agent(JsonlMemory):
        def remove(self, memory_id: str) -> None:
            if not blocked:
                with open(path) as handle:
                    try:
                        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        blocked.append(False)
                    except BlockingIOError:
                        blocked.append(True)
            super().remove(memory_id)

    apply_patch(PATCH.model_copy(update={"operations": PATCH.operations[:1]}), Agent(path))
    assert blocked == [True]
    assert "m_bad" not in path.read_text()
