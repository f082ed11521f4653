"""Helpers shared by the click commands: JSON output, the configured store, a progress bar,
the exit code of a repair and the lines showing the calls a stop waits on."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from provrepair.provenance.store.base import GraphStore

if TYPE_CHECKING:  # the embedded server module loads redis: only when a command needs it
    from provrepair.provenance.store.embedded import ServerInfo


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _announce(info: ServerInfo) -> None:
    click.echo(f"provrepair: started the embedded store ({info.uri}, pid {info.pid}, "
               f"data {info.home})", err=True)


def store() -> GraphStore:
    """The configured store (the embedded one is started on demand, and said so on stderr)."""
    from provrepair.provenance.store.config import open_store

    return open_store(on_start=_announce)


def id_list(text: str | None) -> list[str] | None:
    """A comma-separated option (`--faults m1,m2`) as a list; None when not given."""
    return [part.strip() for part in text.split(",") if part.strip()] if text is not None else None


class ProgressBar:
    """`provenance.progress.Progress` drawn on stderr: only on a terminal, never under --json,
    and only for work of at least `min_total` items (a bar that flashes by helps no one)."""

    def __init__(self, *, quiet: bool = False, min_total: int = 1):
        self.quiet = quiet or not sys.stderr.isatty()
        self.min_total = min_total
        self._bar: Any = None

    def start(self, label: str, total: int) -> None:
        self.finish()
        if not self.quiet and total >= self.min_total:
            self._bar = click.progressbar(length=total, label=label, file=sys.stderr,
                                          show_pos=True, show_eta=True,
                                          item_show_func=lambda item: item)
            self._bar.__enter__()

    def advance(self, n: int = 1, item: str | None = None) -> None:
        if self._bar is not None:
            self._bar.update(n, item)

    def note(self, text: str) -> None:
        click.echo(("\n" if self._bar is not None else "") + text, err=True)

    def finish(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()


def exit_for(status: str) -> None:
    """The exit code of a repair's status (README, "Exit codes"): 3 stopped for a person,
    4 partial; returns for the others (0)."""
    from provrepair.provenance.state.runs import ReportStatus

    if status == ReportStatus.NEEDS_HUMAN:
        sys.exit(3)
    if status == ReportStatus.PARTIAL:
        sys.exit(4)


def pending_lines(pending: list[dict[str, Any]]) -> list[str]:
    """A stop's pending calls, one block each: step, tool, canonical arguments, hash, why."""
    from provrepair.provenance.state.calls import canonical_args

    lines = []
    for call in pending:
        if "tool" not in call:  # a stop recorded before calls were listed
            lines += [f"{call['step_id']}  (the call is shown when the replay reaches it)",
                      f"      {call['reason']}"]
            continue
        unknown = call.get("kind") == "unknown_outcome"
        lines += [f"{call['step_id']}  {call['tool']} {canonical_args(call['args'])}  "
                  f"#{call['call_id']}  {call['side_effect']}"
                  + ("  MAY HAVE BEEN ISSUED" if unknown else ""),
                  f"      {call['reason']}"]
    return lines
