"""The README is true for a newcomer: its CLI reference lists every command and every option
click knows (and every target `apply` takes), its "Using it" block says how to run the
installed command and names only files `provrepair examples --copy-to ex` ships."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from provrepair.cli import main
from provrepair.repair.appliers import APPLIERS

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def commands() -> dict[str, click.Command]:
    """Every command by its path (`db start`, `ingest`), groups opened."""
    ctx = click.Context(main)
    found: dict[str, click.Command] = {}
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                found[f"{name} {sub}"] = command.get_command(ctx, sub)  # type: ignore[assignment]
        else:
            found[name] = command
    return found


def options(command: click.Command) -> set[str]:
    return {opt for param in command.params if isinstance(param, click.Option)
            for opt in (*param.opts, *param.secondary_opts) if opt.startswith("--")} - {"--help"}


def reference_rows() -> dict[str, str]:
    """Command path → the code of every README CLI reference row about it (first column)."""
    groups = {name.split()[0] for name in commands() if " " in name}
    rows: dict[str, str] = {}
    for line in section("CLI reference").splitlines():
        if not line.startswith("| `provrepair "):
            continue
        cell = line.split(" | ", 1)[0]
        words = cell.removeprefix("| `provrepair ").replace("`", " ").split()
        path = " ".join(words[:2]) if words[0] in groups else words[0]
        rows[path] = rows.get(path, "") + " " + cell
    return rows


def test_every_command_and_option_is_in_the_cli_reference() -> None:
    rows = reference_rows()
    missing = {}
    for path, command in commands().items():
        if path not in rows:
            missing[path] = "no row"
            continue
        named = set(re.findall(r"--[a-z][a-z0-9-]*", rows[path]))
        if options(command) - named:
            missing[path] = sorted(options(command) - named)
    assert missing == {}


def test_the_apply_row_names_every_target() -> None:
    row = reference_rows()["apply"]
    assert [name for name in APPLIERS.names() if f"{name}:" not in row] == []


def test_using_it_says_how_to_run_the_installed_command() -> None:
    using = section("Using it")
    assert "source .venv/bin/activate" in using and ".venv/bin/provrepair" in using
    assert "make install" in using


@pytest.mark.parametrize("path", sorted(set(re.findall(r"\bex/[\w./-]+", section("Using it")))))
def test_every_file_the_walkthrough_names_ships(path: str) -> None:
    """`provrepair examples --copy-to ex` copies examples/ (the package's own copy)."""
    assert (REPO / "examples" / path.removeprefix("ex/")).is_file()
