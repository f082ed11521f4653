"""A server killed mid-statement is one line, never a traceback (issue 36): every way the
FalkorDB store talks to the server — a statement, statements streamed on a connection of the
pool (ingest, `run_each`), pipelined reads (the planner) and a new connection — maps the
client's errors to StoreUnavailable. A private embedded server, killed with SIGKILL."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.errors import StoreUnavailable
from provrepair.provenance.store.embedded import EmbeddedServer
from provrepair.provenance.store.falkordb import FalkorDBStore


def kill(pid: int, port: int) -> None:
    """SIGKILL, then wait until the port refuses connections."""
    os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):  # reaped if it is our child
        os.waitpid(pid, 0)
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        except OSError:
            return
        os.sched_yield()


@pytest.fixture
def doomed(tmp_path: Path) -> Iterator[tuple[FalkorDBStore, int, int]]:
    server = EmbeddedServer(tmp_path / "home")
    info, _ = server.start()
    store = FalkorDBStore(info.host, info.port, server.password(), graph="doomed",
                          vault_graph="doomed_vault", connect_timeout=5)
    store.ensure_schema()
    yield store, info.pid, info.port
    server.stop()


def one_line(exc: BaseException) -> None:
    assert isinstance(exc, StoreUnavailable) and "\n" not in str(exc)
    assert "cannot reach the graph store" in str(exc)


def test_a_server_killed_mid_stream_is_one_line(
        doomed: tuple[FalkorDBStore, int, int]) -> None:
    store, pid, port = doomed

    def statements() -> Iterator[tuple[str, dict[str, Any]]]:
        yield "merge_task", {"task_key": "~t", "props": {"task_id": "t"}}
        kill(pid, port)  # between two statements of one stream: the next send or read fails
        yield "merge_task", {"task_key": "~t", "props": {"task_id": "t"}}

    with pytest.raises(StoreUnavailable) as caught:
        store.run_each(statements())
    one_line(caught.value)
    for call in (lambda: store.run("get_task", {"task_key": "~t"}),
                 lambda: store.run_each([("get_task", {"task_key": "~t"})]),
                 lambda: _read_ahead(store)):
        with pytest.raises(StoreUnavailable) as caught:
            call()
        one_line(caught.value)
    with pytest.raises(StoreUnavailable) as caught:  # a new client: refused at connect
        FalkorDBStore(store.host, store.port, None, connect_timeout=2)
    assert "\n" not in str(caught.value)


def _read_ahead(store: FalkorDBStore) -> None:
    with store.read_ahead() as reads:
        reads.send("get_task", {"task_key": "~t"})()
