"""Whether a process of this machine still runs: the one test behind stale-lock takeover
(provenance/lock.py) and stale-server detection (provenance/store/embedded.py)."""

from __future__ import annotations

import os
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """True while `pid` names a running process (one we may not signal still counts as
    alive). A zombie has exited: it only waits for its parent to collect its status. A
    stopped server is one when its parent never collects it (an orphan under a container's
    PID 1 that does not reap), and counting it alive made every `db stop` wait for its
    reaping."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """Linux's /proc says so (state Z, after the command name in parentheses); elsewhere, or
    when /proc cannot be read, not known: the process counts as alive."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    fields = stat[stat.rfind(")") + 1:].split()
    return bool(fields) and fields[0] == "Z"
