"""Helpers shared by the click commands (cli.py and the command modules it registers)."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from provenance.store.base import GraphStore
from provenance.store.embedded import ServerInfo


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _announce(info: ServerInfo) -> None:
    click.echo(f"provrepair: started the embedded store ({info.uri}, pid {info.pid}, "
               f"data {info.home})", err=True)


def store() -> GraphStore:
    """The configured store (the embedded one is started on demand)."""
    from provenance.store.config import open_store

    return open_store(on_start=_announce)


def id_list(text: str | None) -> list[str] | None:
    """A comma-separated option (`--faults m1,m2`) as a list; None when not given."""
    return [part.strip() for part in text.split(",") if part.strip()] if text is not None else None


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector around bulk work (measured: it tripled the Python
    time of a 1M-element ingest, BENCHMARKS.md); reference counting still frees memory."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
