"""Crash and concurrency test hooks (used by tests/integration/test_repair_crash.py only).

`checkpoint(name)` does nothing unless the environment asks for it:
  PROVREPAIR_TEST_KILL_AT=name     the process SIGKILLs itself at that point (a real kill -9)
  PROVREPAIR_TEST_PAUSE_AT=name    it sleeps PROVREPAIR_TEST_PAUSE_S seconds there
"""

from __future__ import annotations

import os
import signal
import time


def checkpoint(name: str) -> None:
    if os.environ.get("PROVREPAIR_TEST_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
    if os.environ.get("PROVREPAIR_TEST_PAUSE_AT") == name:
        time.sleep(float(os.environ.get("PROVREPAIR_TEST_PAUSE_S", "5")))
