"""Named points in crash-sensitive work (the ingest swap, a repair's write-back), where an
installed `Checkpoints` object is told the process reached them.

Product code only calls `checkpoint(name)`; nothing happens unless the process installed an
observer first (`install`). The crash, lock and reliability tests run the CLI through
tests/hooked_cli.py, which installs one that kills the process at a point (a real kill -9) or
holds it there until the test releases it: tests order processes by conditions, never sleeps.
"""

from __future__ import annotations

from typing import Protocol


class Checkpoints(Protocol):
    def reached(self, name: str) -> None:
        """Called at each named point (`ingest_before_swap`, `before_commit`, ...)."""


_installed: Checkpoints | None = None


def install(observer: Checkpoints | None) -> None:
    """Observe every checkpoint of this process from now on (None: stop observing)."""
    global _installed
    _installed = observer


def checkpoint(name: str) -> None:
    if _installed is not None:
        _installed.reached(name)
