"""The README's Python API example, extracted and run as written (so the README cannot drift),
against the session's embedded server; and the API's import stays cheap."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import provrepair
from tests.conftest import Cli

REPO = Path(__file__).resolve().parents[2]


def readme_example() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return text.split("<!-- api-example -->", 1)[1].split("```python", 1)[1].split("```", 1)[0]


def test_the_readme_example_runs(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "shopping_poisoned_price.json").write_text(
        (REPO / "examples" / "shopping_poisoned_price.json").read_text())
    script = tmp_path / "example.py"
    script.write_text(readme_example())
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=cli.env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "['m_f003']"
    assert lines[1].startswith("repaired ") and "$63.99" in lines[1]
    assert lines[2] == "['delete m_f003', 'add m_n007']"
    memory = (tmp_path / "agent-memory.jsonl").read_text()
    assert "m_f003" not in memory and "m_n007" in memory


def test_the_api_names_and_a_cheap_import() -> None:
    assert sorted(provrepair.__all__) == sorted(provrepair._API)
    for name in provrepair.__all__:
        assert getattr(provrepair, name) is not None
    probe = ("import sys, provrepair; print(sorted(m for m in ('openai', 'langgraph', "
             "'falkordb', 'neo4j', 'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env={**os.environ}, check=True)
    assert done.stdout.strip() == "[]"
