"""The embedded server's lifecycle through the real CLI, each test with its own data dir."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from falkordb import FalkorDB

from provrepair.provenance.store.embedded import EmbeddedServer, servers_in
from tests.helpers import EXAMPLE


class HomeCli:
    def __init__(self, home: Path):
        self.home = home
        self.env = {**os.environ, "PROVREPAIR_HOME": str(home)}
        for name in ("PROVREPAIR_URI", "PROVREPAIR_GRAPH"):
            self.env.pop(name, None)

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        exe = Path(sys.executable).with_name("provrepair")
        return subprocess.run([str(exe), *args], capture_output=True, text=True, env=self.env,
                              timeout=120)


@pytest.fixture
def home_cli(tmp_path: Path) -> Iterator[HomeCli]:
    cli = HomeCli(tmp_path / "home")
    yield cli
    EmbeddedServer(cli.home).stop()


def test_start_twice_is_a_noop_that_says_so(home_cli: HomeCli) -> None:
    first = home_cli("db", "start", "--json")
    assert first.returncode == 0, first.stderr
    second = home_cli("db", "start")
    assert second.returncode == 0
    assert "already running" in second.stdout
    assert json.loads(first.stdout)["pid"] == json.loads(home_cli("db", "start", "--json").stdout)["pid"]


def test_status_and_on_demand_start(home_cli: HomeCli) -> None:
    assert json.loads(home_cli("db", "status", "--json").stdout)["running"] is False
    ingested = home_cli("ingest", str(EXAMPLE))  # starts the store on demand
    assert ingested.returncode == 0, ingested.stderr
    assert "started the embedded store" in ingested.stderr
    status = json.loads(home_cli("db", "status", "--json").stdout)
    assert status["running"] is True and status["uri"].startswith("falkordb://127.0.0.1:")
    assert status["data_dir"] == str(home_cli.home)
    assert status["nodes"] == {"memory": 5, "step": 11, "user_input": 2, "tasks": 1}


def test_data_persists_across_stop_and_start(home_cli: HomeCli) -> None:
    home_cli("ingest", str(EXAMPLE))
    before = home_cli("show", "--task", "shopping_task_014", "--json").stdout
    assert home_cli("db", "stop").returncode == 0
    assert json.loads(home_cli("db", "status", "--json").stdout)["running"] is False
    assert home_cli("show", "--task", "shopping_task_014", "--json").stdout == before


def kill_once_logged(home: Path, pid: int, port: int) -> None:
    """kill -9 the server once its append-only log holds every write: appendfsync everysec
    may hold the log's tail in the server's buffer; once it is written to the file, a kill
    of the process (not of the machine) loses nothing."""
    client = redis.Redis(host="127.0.0.1", port=port, password=EmbeddedServer(home).password())
    try:
        deadline = time.monotonic() + 10
        while client.info("persistence")["aof_buffer_length"] != 0:
            assert time.monotonic() < deadline, "the append-only log was never written"
            time.sleep(0.05)
    finally:
        client.close()
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_killed_server_leaves_a_stale_pid_that_is_detected(home_cli: HomeCli) -> None:
    home_cli("ingest", str(EXAMPLE))
    status = json.loads(home_cli("db", "status", "--json").stdout)
    pid, port = status["pid"], int(status["uri"].rsplit(":", 1)[1])
    kill_once_logged(home_cli.home, pid, port)
    assert json.loads(home_cli("db", "status", "--json").stdout)["running"] is False
    restarted = json.loads(home_cli("db", "start", "--json").stdout)
    assert restarted["started"] is True and restarted["pid"] != pid
    assert home_cli("show", "--task", "shopping_task_014", "--json").returncode == 0


def test_server_is_private(home_cli: HomeCli) -> None:
    info = json.loads(home_cli("db", "start", "--json").stdout)
    password_file = home_cli.home / "password"
    assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
    assert stat.S_IMODE((home_cli.home / "redis.conf").stat().st_mode) == 0o600
    password = password_file.read_text().strip()
    cmdline = Path(f"/proc/{info['pid']}/cmdline").read_bytes()
    assert password.encode() not in cmdline  # the password is in the 0600 conf, not argv
    port = int(info["uri"].rsplit(":", 1)[1])
    with pytest.raises(redis.exceptions.AuthenticationError):
        redis.Redis(host="127.0.0.1", port=port).ping()
    client = redis.Redis(host="127.0.0.1", port=port, password=password)
    assert client.config_get("bind")["bind"] == "127.0.0.1"
    # durable through the append-only file; no periodic RDB fork slowing queries
    assert client.config_get("appendonly")["appendonly"] == "yes"
    assert client.config_get("save")["save"] == ""
    assert "--bolt" not in cmdline.decode(errors="replace").lower()
    for out in (home_cli("db", "status").stdout, home_cli("db", "status", "--json").stdout):
        assert password not in out


def test_stop_when_not_running(home_cli: HomeCli) -> None:
    result = home_cli("db", "stop")
    assert result.returncode == 0 and "not running" in result.stdout


def test_data_directory_is_private(home_cli: HomeCli) -> None:
    """Stored content and evaluation data (in the AOF) are readable by their owner only."""
    assert home_cli("ingest", str(EXAMPLE)).returncode == 0
    for folder in (home_cli.home, home_cli.home / "data"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    files = [p for p in home_cli.home.rglob("*") if p.is_file()]
    assert any(p.suffix == ".aof" for p in files)
    loose = {str(p.relative_to(home_cli.home)): oct(stat.S_IMODE(p.stat().st_mode))
             for p in files if stat.S_IMODE(p.stat().st_mode) & 0o077}
    assert not loose


def test_home_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "home").write_text("not a folder")
    result = HomeCli(tmp_path / "home")("tasks")
    assert result.returncode == 2
    assert result.stderr.startswith("ConfigError: PROVREPAIR_HOME=")
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_start_that_logs_damage_is_reported(home_cli: HomeCli) -> None:
    """`db start` checks the log written since the start (and probes every graph)."""
    from provrepair.provenance.errors import StoreUnavailable

    assert home_cli("db", "start").returncode == 0
    server = EmbeddedServer(home_cli.home)
    info = server.running()
    assert info is not None
    server._verify(info, 0)  # a clean start passes
    offset = (home_cli.home / "redis.log").stat().st_size
    with open(home_cli.home / "redis.log", "a") as log:
        log.write("1:M 24 Nov 2026 # <graph> CRITICAL Attempted to access undefined attribute\n")
    with pytest.raises(StoreUnavailable, match="started damaged"):
        server._verify(info, offset)


def test_two_concurrent_starts_make_one_server(home_cli: HomeCli) -> None:
    exe = Path(sys.executable).with_name("provrepair")
    procs = [subprocess.Popen([str(exe), "db", "start", "--json"], env=home_cli.env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    results = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert [r["started"] for r in results].count(True) == 1
    assert results[0]["pid"] == results[1]["pid"]
    assert servers_in(home_cli.home) == [results[0]["pid"]]


def test_server_found_by_its_lock_without_server_json(home_cli: HomeCli) -> None:
    pid = json.loads(home_cli("db", "start", "--json").stdout)["pid"]
    (home_cli.home / "server.json").unlink()
    status = json.loads(home_cli("db", "status", "--json").stdout)
    assert status["running"] is True and status["pid"] == pid
    (home_cli.home / "server.json").unlink()
    again = home_cli("db", "start")
    assert again.returncode == 0 and "already running" in again.stdout and str(pid) in again.stdout
    (home_cli.home / "server.json").unlink()
    assert json.loads(home_cli("db", "stop", "--json").stdout) == {"stopped": True, "pid": pid}
    assert servers_in(home_cli.home) == []


def test_the_lock_dies_with_the_server(home_cli: HomeCli) -> None:
    pid = json.loads(home_cli("db", "start", "--json").stdout)["pid"]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not EmbeddedServer(home_cli.home).running()
    restarted = json.loads(home_cli("db", "start", "--json").stdout)
    assert restarted["started"] is True and servers_in(home_cli.home) == [restarted["pid"]]


def module_setting(home: Path, name: str) -> int:
    """A FalkorDB module setting of the running server of `home` (GRAPH.CONFIG GET)."""
    info = EmbeddedServer(home).running()
    assert info is not None
    client = redis.Redis(host=info.host, port=info.port, password=EmbeddedServer(home).password())
    try:
        _, value = client.execute_command("GRAPH.CONFIG", "GET", name)
    finally:
        client.close()
    return int(value)


def test_the_server_keeps_a_compiled_plan_for_every_query(server_home: Path) -> None:
    """FalkorDB caches 25 plans per graph unless told: fewer than one repair uses, and then
    every statement is parsed and planned again (BENCHMARKS-archive.md, "bench sweep --jobs")."""
    size = module_setting(server_home, "CACHE_SIZE")
    queries = list((Path(__file__).resolve().parents[2] / "cypher").rglob("*.cypher"))
    assert len(queries) > 25 and size >= len(queries)


def test_the_server_logs_every_write_as_its_effects(server_home: Path) -> None:
    """EFFECTS_THRESHOLD 0: no write goes into the append-only file as query text to be run
    again on load (docs/engines.md, "The append-only file"); by default a fast one does."""
    assert module_setting(server_home, "EFFECTS_THRESHOLD") == 0


def test_a_log_whose_reruns_would_move_ids_reloads_whole(home_cli: HomeCli) -> None:
    """FalkorDB issue #2235, reduced (docs/engines.md, "The append-only file"): an index-fed
    DELETE frees ids in index order, and loading the base snapshot rebuilds the index in id
    order; logged as query text, the DELETE and the CREATE after it rerun on load with
    another id, and the slow SET, logged as effects naming the node's id, crashed the load
    (SIGSEGV) with the default EFFECTS_THRESHOLD. The product's server, killed and started
    again, holds the same nodes under the same ids."""
    server = EmbeddedServer(home_cli.home)
    info, _ = server.start()
    graph = FalkorDB(host=info.host, port=info.port,
                     password=server.password()).select_graph("reload_probe")
    graph.query("CREATE INDEX FOR (n:N) ON (n.k)")
    graph.query("UNWIND range(0, 2) AS i CREATE (:N {k: 'a', i: i})")
    for i in (2, 0, 1):  # each SET of an indexed property adds the node to the index anew
        graph.query("MATCH (n:N {i: $i}) SET n.k = 'b'", {"i": i})
    server.rewrite_log(info)
    graph.query("MATCH (n:N {k: 'b'}) DELETE n")
    graph.query("CREATE (:N {k: 'c', name: 'new'})")
    graph.query("MATCH (n:N {name: 'new'}) WITH n, range(1, 300000) AS pad SET n.v = size(pad)")
    probe = "MATCH (n:N) RETURN id(n), n.k, n.name, n.v ORDER BY id(n)"
    before = graph.query(probe).result_set
    assert [row[1:] for row in before] == [["c", "new", 300000]]
    kill_once_logged(home_cli.home, info.pid, info.port)
    again, started = EmbeddedServer(home_cli.home).start()
    assert started
    graph = FalkorDB(host=again.host, port=again.port,
                     password=server.password()).select_graph("reload_probe")
    assert graph.query(probe).result_set == before
