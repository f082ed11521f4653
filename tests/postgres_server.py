"""A throwaway PostgreSQL server for the LangGraph PostgresStore tests: `initdb` into a fresh
temporary directory, `pg_ctl start` on a free localhost port (trust authentication, nothing
outside the directory is touched), `pg_ctl stop` and the directory removed at the end.

The binaries come from Debian's `postgresql` package (`make postgres` installs it when missing,
and `make test` depends on that); without them the tests skip, saying why.

initdb and postgres refuse to run as root. Run as root (a CI container), the directory is
given to the unprivileged user `nobody` and both run as that user through `runuser`; the
tests connect over TCP, so they need nothing of that user.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SUPERUSER = "provrepair"


def postgres_bin() -> Path | None:
    """The directory of initdb/pg_ctl: Debian's versioned one (newest), else PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name)
                   if Path(p).parent.parent.name.isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def running_postgres() -> Iterator[str]:
    """Yields the server's conninfo (a postgresql:// URI of database `postgres`)."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        raise FileNotFoundError("no initdb: install Debian's postgresql package (make postgres)")
    root = Path(tempfile.mkdtemp(prefix="provrepair-pg-"))
    data, log = root / "data", root / "server.log"
    prefix: list[str] = []
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(root, nobody.pw_uid, nobody.pw_gid)
        prefix = ["runuser", "-u", "nobody", "--"]
    port = _free_port()

    def run(*args: str) -> None:
        done = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=300,
                              cwd=root)
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stderr.strip() or done.stdout.strip()}"
                               f"\n{log.read_text() if log.exists() else ''}")

    try:
        run(str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust",
            "--no-sync", "-E", "UTF8")
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "120",
            "-o", f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off", "start")
        try:
            yield f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres"
        finally:
            run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)
