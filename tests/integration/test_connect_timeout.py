"""PROVREPAIR_CONNECT_TIMEOUT bounds the FalkorDB client: a port that accepts connections
and never answers fails in about that time, with one line naming the variable (it used to
hang for the client's 600 s read timeout)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path


def test_a_server_that_never_answers_fails_within_the_connect_timeout(tmp_path: Path) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel accepts; nobody ever reads or writes
        port = silent.getsockname()[1]
        env = {**os.environ, "PROVREPAIR_HOME": str(tmp_path / "home"),
               "PROVREPAIR_URI": f"falkordb://127.0.0.1:{port}",
               "PROVREPAIR_CONNECT_TIMEOUT": "1"}
        exe = Path(sys.executable).with_name("provrepair")
        started = time.monotonic()
        done = subprocess.run([str(exe), "tasks"], capture_output=True, text=True, env=env,
                              timeout=60)
        elapsed = time.monotonic() - started
    assert done.returncode == 2
    assert done.stderr.startswith("StoreUnavailable: ") and "PROVREPAIR_CONNECT_TIMEOUT" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert elapsed < 20  # seconds, not the 600 s operation timeout
