"""pid_alive: a running process is alive, an exited one is not, and neither is a zombie
(exited, its status not yet collected by its parent)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from provrepair.provenance.process import pid_alive


def test_a_running_process_is_alive_and_an_exited_one_is_not() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        assert pid_alive(child.pid)
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait()
    assert not pid_alive(child.pid)
    assert not pid_alive(0) and not pid_alive(-1)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_a_zombie_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        # exited but not collected: a zombie until wait(); wait for the state, not a time
        deadline = time.monotonic() + 30
        while Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline, "the child never exited"
            time.sleep(0.01)
        assert not pid_alive(child.pid)
    finally:
        child.wait()
