"""Crash and concurrency test hooks (the crash, lock and reliability tests use them).

`checkpoint(name)` does nothing unless the environment asks for it:
  PROVREPAIR_TEST_KILL_AT=name     the process SIGKILLs itself at that point (a real kill -9)
  PROVREPAIR_TEST_WAIT_AT=name     a barrier: the process creates `<name>.reached` in the
                                   folder PROVREPAIR_TEST_BARRIER and waits there until the
                                   test creates `<name>.release` (at most 120 s), so tests
                                   order two processes by conditions, never by sleeps
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

BARRIER_TIMEOUT_S = 120.0


def checkpoint(name: str) -> None:
    if os.environ.get("PROVREPAIR_TEST_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
    if os.environ.get("PROVREPAIR_TEST_WAIT_AT") == name:
        wait_for_release(Path(os.environ["PROVREPAIR_TEST_BARRIER"]), name)


def wait_for_release(folder: Path, name: str) -> None:
    (folder / f"{name}.reached").touch()
    deadline = time.monotonic() + BARRIER_TIMEOUT_S
    while not (folder / f"{name}.release").exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"test barrier {name!r} was never released")
        time.sleep(0.01)  # polling the condition, not a fixed pause
