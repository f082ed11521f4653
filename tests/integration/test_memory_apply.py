"""Carrying the repaired memory back (README): the cumulative patch over every run, the
agent's own ids, a checked target, saved patches and the embedding index, through the real
console script and real stores (LangGraph's SqliteStore read back through LangGraph's API, a
JSONL memory file)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.sqlite import SqliteStore

from tests.conftest import Cli

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = ROOT / "tests" / "cases" / "replay"
NEEDS_HUMAN = CASES / "small_side_effect_needs_human.json"
IN_PLACE = CASES / "small_memory_update_in_place.json"


def task_of(case: Path) -> str:
    task: str = json.loads(case.read_text())["task_id"]
    return task


def recorded_active(case: Path) -> dict[str, str]:
    """The agent's own store before the repair: each agent id with the content it holds."""
    records = json.loads(case.read_text())["memory_store"]
    return {m.get("record_id") or m["memory_id"]: m["content"]
            for m in records if m["status"] == "active"}


def jsonl_memory(path: Path, records: dict[str, str], key: str = "content") -> Path:
    path.write_text("".join(json.dumps({"id": i, key: c, "status": "active"}) + "\n"
                            for i, c in records.items()))
    return path


def jsonl_active(path: Path) -> dict[str, str]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {r["id"]: r["content"] for r in rows if r["status"] == "active"}


def agent_store(path: Path, index: dict[str, Any] | None = None) -> SqliteStore:
    """The agent's SqliteStore (with an index: opened as the applier opens it)."""
    from provrepair.repair.appliers.langgraph import sqlite_module

    driver = sqlite_module(extensions=index is not None)
    store = SqliteStore(driver.connect(path, check_same_thread=False, isolation_level=None),
                        index=index)  # type: ignore[arg-type]
    store.setup()
    return store


def seeded_store(path: Path, records: dict[str, str], namespace: tuple[str, ...] = ("memories",),
                 index: dict[str, Any] | None = None) -> SqliteStore:
    store = agent_store(path, index)
    for key, content in records.items():
        store.put(namespace, key, {"content": content, "tags": ["kept"]})
    return store


def searched(store: SqliteStore, namespace: tuple[str, ...] = ("memories",)) -> dict[str, str]:
    return {i.key: i.value["content"] for i in store.search(namespace, limit=100)}


def test_resume_then_one_apply_removes_the_fault(cli: Cli, tmp_path: Path) -> None:
    """The fault is deleted by the run that stopped (needs_human); the resumed run adds
    nothing. The patch of the task covers both runs, so one apply at the end removes it."""
    task = task_of(NEEDS_HUMAN)
    memory = jsonl_memory(tmp_path / "memory.jsonl", recorded_active(NEEDS_HUMAN))
    assert cli("ingest", str(NEEDS_HUMAN)).returncode == 0
    assert cli("repair", "--task", task).returncode == 3
    done = cli("repair", "--task", task, "--resume", "--approve", "s_003", "--json")
    assert done.returncode == 4, done.stderr
    report = json.loads(done.stdout)
    runs = [r["run_id"] for r in json.loads(cli("history", "--task", task, "--json").stdout)]
    patch = json.loads(cli("patch", "--task", task).stdout)
    assert patch == report["memory_patch"]
    assert patch["runs"] == runs and patch["run_id"] == runs[-1] == report["run_id"]
    assert [(o["op"], o["memory_id"]) for o in patch["operations"]] == [("delete", "m_f002")]
    # one run's patch is still there: the resumed run alone has nothing to carry
    assert json.loads(cli("patch", "--task", task, "--run", runs[-1]).stdout)["operations"] == []
    first = json.loads(cli("patch", "--task", task, "--run", runs[0]).stdout)
    assert (first["runs"], first["operations"]) == ([runs[0]], patch["operations"])
    applied = cli("apply", "--task", task, "--to", f"jsonl:{memory}", "--json")
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout)["applied"] == ["delete m_f002"]
    assert jsonl_active(memory) == {"m_001": "ORD00200 total: $120.00",
                                    "m_002": "Customer prefers email contact"}


@pytest.mark.parametrize("kind", ["langgraph-sqlite", "jsonl"])
def test_an_in_place_update_goes_back_under_the_agents_id(cli: Cli, tmp_path: Path,
                                                          kind: str) -> None:
    """The agent updated m_001 in place (the graph's version m_001~2, record_id m_001); the
    repair regenerates it: the patch is one `put` of m_001, which the agent's store takes."""
    task = task_of(IN_PLACE)
    assert cli("ingest", str(IN_PLACE)).returncode == 0
    original = json.loads(cli("show", "--task", task, "--original", "--json").stdout)
    assert original["memory_store"][2]["record_id"] == "m_001"  # kept through the graph
    assert cli("repair", "--task", task).returncode == 0
    patch = json.loads(cli("patch", "--task", task).stdout)
    assert patch["operations"] == [{
        "op": "put", "memory_id": "m_001", "reason": f"regenerated by run {patch['run_id']}",
        "expected_content": "Home airport: LAX", "content": "Home airport: OAK",
        "produced_by": f"s_002@{patch['run_id'][-6:]}"}]
    assert patch["kept"] == [{"memory_id": "m_002", "content": "User prefers aisle seats"}]
    listed = json.loads(cli("memory", "--task", task, "--json").stdout)
    assert {m["agent_id"]: m["content"] for m in listed} == {
        "m_001": "Home airport: OAK", "m_002": "User prefers aisle seats"}
    before = recorded_active(IN_PLACE)
    assert before == {"m_002": "User prefers aisle seats", "m_001": "Home airport: LAX"}
    if kind == "jsonl":
        where = jsonl_memory(tmp_path / "memory.jsonl", before)
        read = lambda: jsonl_active(where)  # noqa: E731
    else:
        where = tmp_path / "agent.db"
        seeded_store(where, before)
        read = lambda: searched(agent_store(where))  # noqa: E731
    for attempt in ("first", "again"):
        done = cli("apply", "--task", task, "--to", f"{kind}:{where}", "--json")
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["applied" if attempt == "first" else "already_applied"] == ["put m_001"]
        assert read() == {"m_001": "Home airport: OAK", "m_002": "User prefers aisle seats"}
    if kind == "langgraph-sqlite":  # the other fields of the agent's value are kept
        assert agent_store(where).get(("memories",), "m_001").value["tags"] == ["kept"]  # type: ignore[union-attr]


def test_a_wrong_target_is_refused_and_nothing_written(cli: Cli, tmp_path: Path) -> None:
    """Another namespace, another value key, a mistyped path, the checkpointer's database, a
    directory: each one line, exit 2, the store untouched and no file created."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    task = task_of(IN_PLACE)
    assert cli("ingest", str(IN_PLACE)).returncode == 0
    assert cli("repair", "--task", task).returncode == 0
    before = recorded_active(IN_PLACE)
    db = tmp_path / "agent.db"
    seeded_store(db, before, namespace=("agent", "memories"))
    memory = jsonl_memory(tmp_path / "memory.jsonl", before, key="text")
    checkpoints = tmp_path / "checkpoints.db"
    conn = sqlite3.connect(checkpoints, check_same_thread=False)
    SqliteSaver(conn).setup()
    conn.close()  # its write-ahead log merged: the file is what the checkpointer left
    files = {p: p.read_bytes() for p in (db, memory, checkpoints)}
    refused = [
        (["--to", f"langgraph-sqlite:{db}"], "TargetMismatch: the target holds none"),
        (["--to", f"langgraph-sqlite:{db}", "--namespace", "agent/memories",
          "--value-key", "text"], "TargetMismatch: the target holds none"),
        (["--to", f"jsonl:{memory}"], "TargetMismatch: the target holds none"),
        (["--to", f"langgraph-sqlite:{tmp_path / 'agnet.db'}"], "TargetMismatch: "),
        (["--to", f"jsonl:{tmp_path / 'memroy.jsonl'}"], "TargetMismatch: "),
        (["--to", f"langgraph-sqlite:{checkpoints}"], "TargetMismatch: "),
        (["--to", f"jsonl:{tmp_path}"], "TargetMismatch: "),
        (["--to", f"sqlite:{db}"], "ConfigError: "),
    ]
    for args, error in refused:
        done = cli("apply", "--task", task, *args)
        assert done.returncode == 2, (args, done.stdout)
        assert done.stderr.startswith(error) and len(done.stderr.splitlines()) == 1, done.stderr
        assert "nothing written" in done.stderr or error == "ConfigError: ", done.stderr
    assert {p: p.read_bytes() for p in files} == files
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in files)
    # the right namespace and key: applied
    done = cli("apply", "--task", task, "--to", f"langgraph-sqlite:{db}",
               "--namespace", "agent/memories")
    assert done.returncode == 0, done.stderr
    assert searched(agent_store(db), ("agent", "memories"))["m_001"] == "Home airport: OAK"
    done = cli("apply", "--task", task, "--to", f"jsonl:{memory}", "--value-key", "text")
    assert done.returncode == 0, done.stderr
    lines = {r["id"]: r for r in map(json.loads, memory.read_text().splitlines())}
    assert lines["m_001"] == {"id": "m_001", "text": "Home airport: OAK", "status": "active"}


def test_a_saved_patch_applies_without_provrepairs_store(cli: Cli, tmp_path: Path) -> None:
    task = task_of(IN_PLACE)
    assert cli("ingest", str(IN_PLACE)).returncode == 0
    assert cli("repair", "--task", task).returncode == 0
    saved = tmp_path / "patch.json"
    saved.write_text(cli("patch", "--task", task).stdout)
    memory = jsonl_memory(tmp_path / "memory.jsonl", recorded_active(IN_PLACE))
    offline = Cli(tmp_path / "no-home", "g")
    offline.env["PROVREPAIR_URI"] = "bolt://127.0.0.1:9"  # nothing listens: never reached
    done = offline("apply", "--patch", str(saved), "--to", f"jsonl:{memory}")
    assert done.returncode == 0, done.stderr
    assert jsonl_active(memory)["m_001"] == "Home airport: OAK"
    broken = tmp_path / "broken.json"
    patch = json.loads(saved.read_text())
    patch["operations"].append({"op": "add", "memory_id": "m_x"})  # no content
    broken.write_text(json.dumps(patch))
    for args, error in ((["--patch", str(broken)], "InputError: "),
                        (["--patch", str(tmp_path / "none.json")], "InputError: "),
                        (["--patch", str(saved), "--task", task], "InputError: "),
                        (["--patch", str(saved), "--run", "r"], "InputError: ")):
        done = offline("apply", *args, "--to", f"jsonl:{memory}")
        assert done.returncode == 2 and done.stderr.startswith(error), done.stderr
        assert len(done.stderr.splitlines()) == 1


def test_semantic_search_finds_the_corrected_record_through_the_cli(
        cli: Cli, tmp_path: Path) -> None:
    """`--index` names the agent's embedding function: the record the patch writes is
    embedded, so the agent's `search(query=...)` ranks it first."""
    from tests.embedding import DIMS, embed

    task = task_of(IN_PLACE)
    assert cli("ingest", str(IN_PLACE)).returncode == 0
    assert cli("repair", "--task", task).returncode == 0
    db = tmp_path / "agent.db"
    index = {"dims": DIMS, "embed": embed, "fields": ["content"]}
    seeded_store(db, recorded_active(IN_PLACE), index=index)
    config = tmp_path / "index.json"
    config.write_text(json.dumps({"embed": "tests.embedding:embed", "dims": DIMS,
                                  "fields": ["content"]}))
    cli.env["PYTHONPATH"] = str(ROOT)  # the agent's module, importable as the agent's is
    done = cli("apply", "--task", task, "--to", f"langgraph-sqlite:{db}", "--index", str(config))
    assert done.returncode == 0, done.stderr
    # "OAK" is only in the corrected text: the record written without its embedding would
    # score as its old text ("LAX") does, no better than the unrelated m_002
    hits = agent_store(db, index).search(("memories",), query="OAK", limit=2)
    assert next((h.key, h.value["content"]) for h in hits) == ("m_001", "Home airport: OAK")
    assert hits[0].score is not None and hits[0].score > hits[1].score  # type: ignore[operator]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"embed": "tests.embedding:nothing", "dims": DIMS}))
    done = cli("apply", "--task", task, "--to", f"langgraph-sqlite:{db}", "--index", str(bad))
    assert done.returncode == 2 and done.stderr.startswith("ConfigError: --index")


def test_patch_and_apply_of_an_unknown_task_say_so(cli: Cli, tmp_path: Path) -> None:
    """Not "run repair first": there is no such task (issue 26)."""
    memory = jsonl_memory(tmp_path / "memory.jsonl", {"m_1": "x"})
    for args in (["patch", "--task", "nope"], ["patch", "--task", "nope", "--run", "r"],
                 ["apply", "--task", "nope", "--to", f"jsonl:{memory}"]):
        done = cli(*args)
        assert done.returncode == 2
        assert done.stderr.startswith("TaskNotFound: task 'nope'"), done.stderr
