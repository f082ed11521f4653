"""Pause Python's cyclic garbage collector around bulk work, and only there.

Ingest builds rows for every element of a file, and a plan builds tens of thousands of
short-lived tuples and lists. Each allocation burst triggers collections that traverse the
whole heap (every module, every model class) while creating no reference cycles worth
collecting: the collector tripled the Python time of a 1M-element ingest, and its full
(generation 2) passes added ~15 ms to every other plan of a 1k-node region, more in a larger
process (BENCHMARKS.md, "Ingest" and "Planner"). Reference counting still frees memory while
the collector is paused; cycles left behind are collected once it runs again.

Pauses nest and may overlap across threads: the collector is switched back on when the last
pause ends, and only if it was on when the first began (a program that disabled it itself
keeps it disabled).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_active = 0                # pauses in progress (nested or in other threads)
_restore = False           # was the collector on when the first of them began?


@contextmanager
def gc_paused() -> Iterator[None]:
    global _active, _restore
    with _lock:
        if _active == 0:
            _restore = gc.isenabled()
            gc.disable()
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _restore:
                gc.enable()
