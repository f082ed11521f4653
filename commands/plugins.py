"""`provrepair plugins`: every name the registries know, by kind, and where it comes from
(provenance/registry.py): built in, an installed package's entry point, or registered from
Python. As `datasette plugins` does, so a user sees which package a name came from, and
that a plugin naming a built-in is ignored."""

from __future__ import annotations

import importlib
from dataclasses import asdict

import click

from provrepair.commands.output import emit_json
from provrepair.provenance.registry import Entry, Registry

# kind → the registry naming it ("module:attribute"); one per entry-point group
REGISTRIES = {
    "reasoner": "provrepair.repair.reasoners:REASONERS",
    "tool pack": "provrepair.repair.tools.packs:TOOL_PACKS",
    "loader": "provrepair.loaders:LOADERS",
    "applier": "provrepair.repair.appliers:APPLIERS",
    "engine": "provrepair.provenance.store.config:ENGINES",
    "method": "provrepair.repair.methods:METHODS",
}


def registry(kind: str) -> Registry[object]:
    module, _, name = REGISTRIES[kind].partition(":")
    found: Registry[object] = getattr(importlib.import_module(module), name)
    return found


def every_entry() -> list[Entry]:
    return [entry for kind in REGISTRIES for entry in registry(kind).entries()]


@click.command()
@click.option("--kind", type=click.Choice(list(REGISTRIES)), default=None,
              help="Only this kind.")
@click.option("--json", "as_json", is_flag=True,
              help="Print a list of {kind, name, source, target, shadowed}.")
def plugins(kind: str | None, as_json: bool) -> None:
    """List the reasoners, tool packs, loaders, appliers, engines and methods the registries
    found, with their source: built-in, or the installed package whose entry point adds it."""
    entries = [e for e in every_entry() if kind is None or e.kind == kind]
    if as_json:
        emit_json([asdict(e) for e in entries])
        return
    for name in dict.fromkeys(e.kind for e in entries):
        click.echo(f"{name}s:")
        for e in (e for e in entries if e.kind == name):
            note = "  (ignored: a built-in has this name)" if e.shadowed else ""
            click.echo(f"  {e.name:<24} {e.source:<24} {e.target}{note}")
