"""gc_paused: the cyclic collector is off inside, restored after, nesting and threads."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from provrepair.provenance.gc_pause import gc_paused


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_inside_and_restored_after() -> None:
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_restored_after_an_exception() -> None:
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_nested_pauses_restore_once_the_outer_ends() -> None:
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_program_that_disabled_the_collector_keeps_it_disabled() -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_overlapping_pauses_in_two_threads_end_with_the_last() -> None:
    """Thread B's pause starts inside A's and ends after it: the collector stays off until
    B is done (a plain save-and-restore would switch it on under B)."""
    a_inside, a_done, b_may_finish = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def thread_b() -> None:
        a_inside.wait()
        with gc_paused():
            b_may_finish.set()
            a_done.wait()
            seen.append(gc.isenabled())

    other = threading.Thread(target=thread_b)
    other.start()
    with gc_paused():
        a_inside.set()
        b_may_finish.wait()
    a_done.set()
    other.join()
    assert seen == [False]
    assert gc.isenabled()
