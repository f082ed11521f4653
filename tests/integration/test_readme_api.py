"""The README's Python API example, extracted and run as written (so the README cannot drift),
against the session's embedded server; and the API's import stays cheap."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import provrepair
from provrepair.provenance.store.embedded import EmbeddedServer, servers_in
from tests.conftest import Cli

REPO = Path(__file__).resolve().parents[2]


def readme_example() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return text.split("<!-- api-example -->", 1)[1].split("```python", 1)[1].split("```", 1)[0]


def run_example(env: dict[str, str], cwd: Path) -> list[str]:
    script = cwd / "example.py"
    script.write_text(readme_example())
    done = subprocess.run([sys.executable, str(script)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_readme_example_runs(cli: Cli, tmp_path: Path) -> None:
    """From a folder that is not the clone: the example case comes from the package."""
    lines = run_example(cli.env, tmp_path)
    assert lines[0] == "['m_f003']"
    assert lines[1].startswith("repaired ") and "$63.99" in lines[1]
    assert lines[2] == "['delete m_f003', 'add m_n007']"
    memory = (tmp_path / "agent-memory.jsonl").read_text()
    assert "m_f003" not in memory and "m_n007" in memory
    assert EmbeddedServer(Path(cli.env["PROVREPAIR_HOME"])).running() is not None  # not ours


def test_the_readme_example_leaves_no_server_it_started(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "PROVREPAIR_HOME": str(home), "PROVREPAIR_GRAPH": "readme"}
    env.pop("PROVREPAIR_URI", None)
    work = tmp_path / "work"
    work.mkdir()
    assert run_example(env, work)[0] == "['m_f003']"
    assert EmbeddedServer(home).running() is None
    assert servers_in(home) == []


def test_the_api_names_and_a_cheap_import() -> None:
    assert sorted(provrepair.__all__) == sorted(provrepair._API)
    for name in provrepair.__all__:
        assert getattr(provrepair, name) is not None
    probe = ("import sys, provrepair; print(sorted(m for m in ('openai', 'langgraph', "
             "'falkordb', 'neo4j', 'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env={**os.environ}, check=True)
    assert done.stdout.strip() == "[]"
