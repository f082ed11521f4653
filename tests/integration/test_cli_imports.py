"""Heavy imports stay out of the commands that do not need them: `--help`, `tasks`, `plan`
and an offline `repair` never load the `openai` SDK, matplotlib or the MCP client (issue 9:
they took seconds),
and the engine clients load on first use: `--help` and `methods` load neither redis (63% of
`--help`'s import time before) nor falkordb nor neo4j, and the embedded store never loads the
Neo4j driver (issue 26)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, Cli

HEAVY = ("openai", "matplotlib", "mcp", "redis", "falkordb", "neo4j")
EMBEDDED = ["falkordb", "redis"]  # the embedded store's clients, and nothing else heavy
# Runs the real CLI entry point and, at exit, writes which heavy packages got imported.
PROBE = ("import atexit, json, os, sys\n"
         "def report():\n"
         "    with open(os.environ['PROBE_OUT'], 'w') as out:\n"
         f"        json.dump(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r}), out)\n"
         "atexit.register(report)\n"
         "from provrepair.cli import main\n"
         "sys.argv = ['provrepair', *sys.argv[1:]]\n"
         "main()\n")


def heavy_imports(cli: Cli, tmp_path: Path, *args: str) -> list[str]:
    out = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          env={**cli.env, "PROBE_OUT": str(out)}, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(out.read_text())
    return loaded


@pytest.mark.parametrize(("args", "expected"), [
    (["--help"], []), (["db", "--help"], []), (["methods"], []), (["tasks"], EMBEDDED),
    (["plan", "--task", "shopping_task_014", "--no-record"], EMBEDDED),
    (["repair", "--task", "shopping_task_014", "--reasoner", "offline", "--dry-run"], EMBEDDED),
], ids=lambda a: " ".join(a[:2]) if isinstance(a, list) and a and a[0] != EMBEDDED[0] else "")
def test_no_heavy_import(cli: Cli, tmp_path: Path, args: list[str], expected: list[str]) -> None:
    assert cli("ingest", str(EXAMPLES / "shopping_poisoned_price.json")).returncode == 0
    assert heavy_imports(cli, tmp_path, *args) == expected


def test_the_probe_sees_a_heavy_import(cli: Cli, tmp_path: Path) -> None:
    """The check itself: `--reasoner openai` does load the SDK (it fails for want of a key,
    before any store is opened: no engine client)."""
    out = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", PROBE, "repair", "--task", "x", "--reasoner",
                           "openai"], capture_output=True, text=True, timeout=120,
                          env={**cli.env, "PROBE_OUT": str(out), "OPENAI_API_KEY": ""})
    assert done.returncode == 2 and "OPENAI_API_KEY" in done.stderr
    assert json.loads(out.read_text()) == ["openai"]
