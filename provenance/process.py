"""Whether a process of this machine still runs: the one test behind stale-lock takeover
(provenance/lock.py) and stale-server detection (provenance/store/embedded.py)."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True while `pid` names a process (one we may not signal still counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
