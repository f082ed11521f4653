"""The real `provrepair` CLI with a checkpoint observer installed (provenance/checkpoints.py):
the crash and lock tests run this script instead of the console script.

    HOOK_KILL_AT=name     the process SIGKILLs itself at that checkpoint (a real kill -9)
    HOOK_WAIT_AT=name     a barrier: creates `<name>.reached` in the folder HOOK_BARRIER and
                          waits there until the test creates `<name>.release` (at most 120 s)

These variables are read here, in the tests, never by the product.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

BARRIER_TIMEOUT_S = 120.0


class EnvironmentCheckpoints:
    def __init__(self, kill_at: str | None, wait_at: str | None, barrier: Path | None):
        self.kill_at, self.wait_at, self.barrier = kill_at, wait_at, barrier

    def reached(self, name: str) -> None:
        if name == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if name == self.wait_at and self.barrier is not None:
            wait_for_release(self.barrier, name)


def wait_for_release(folder: Path, name: str) -> None:
    (folder / f"{name}.reached").touch()
    deadline = time.monotonic() + BARRIER_TIMEOUT_S
    while not (folder / f"{name}.release").exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"test barrier {name!r} was never released")
        time.sleep(0.01)  # polling the condition, not a fixed pause


def command(*args: str) -> list[str]:
    """argv running the CLI through this script."""
    return [sys.executable, str(Path(__file__).resolve()), *args]


if __name__ == "__main__":
    from provrepair.cli import main
    from provrepair.provenance.checkpoints import install

    barrier = os.environ.get("HOOK_BARRIER")
    install(EnvironmentCheckpoints(os.environ.get("HOOK_KILL_AT"), os.environ.get("HOOK_WAIT_AT"),
                                   Path(barrier) if barrier else None))
    sys.argv[0] = "provrepair"
    main()
