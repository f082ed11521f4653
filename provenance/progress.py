"""How long work reports progress without knowing who watches (the CLI draws a bar).

    progress.start(label, total)      a phase of `total` items begins
    progress.advance(n, item)         n more done (item: what was just done, for display)
    progress.note(text)               something the user should read (a skipped file...)
    progress.finish()                 the phase ended

The library never prints: it calls these on the object it was given (`NO_PROGRESS` when the
caller does not care).
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def start(self, label: str, total: int) -> None: ...

    def advance(self, n: int = 1, item: str | None = None) -> None: ...

    def note(self, text: str) -> None: ...

    def finish(self) -> None: ...


class NoProgress:
    """Reports nowhere; notes are kept so a caller can still show them."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def start(self, label: str, total: int) -> None:
        pass

    def advance(self, n: int = 1, item: str | None = None) -> None:
        pass

    def note(self, text: str) -> None:
        self.notes.append(text)

    def finish(self) -> None:
        pass


NO_PROGRESS: Progress = NoProgress()
