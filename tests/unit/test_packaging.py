"""The built wheel: one top-level name, every package and data file inside, SPDX license.

Builds the wheel from a copy of the repository (no build isolation: setuptools comes from the
dev install, nothing is downloaded), then reads the archive.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOP_LEVEL_SKIP = {".git", ".venv", "build", "dist", "tests", "bench", "tools", ".hypothesis"}
ANY_LEVEL_SKIP = shutil.ignore_patterns("node_modules", "__pycache__", "*.egg-info", ".*_cache")


def _skip(folder: str, names: list[str]) -> set[str]:
    skipped = set(ANY_LEVEL_SKIP(folder, names))
    return skipped | (TOP_LEVEL_SKIP & set(names) if Path(folder) == REPO else set())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    src = tmp_path_factory.mktemp("src") / "provrepair"
    shutil.copytree(REPO, src, ignore=_skip)
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "--quiet", "-w", str(out), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = out.glob("provrepair-*.whl")
    return zipfile.ZipFile(path)


def test_one_top_level_name(wheel: zipfile.ZipFile) -> None:
    tops = {name.split("/")[0] for name in wheel.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"provrepair"}


def test_every_package_and_data_file_is_inside(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    missing = []
    for folder in ("provenance", "repair", "loaders", "commands", "cypher", "benchmark"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                arc = "provrepair/" + path.relative_to(REPO).as_posix()
                if arc not in names:
                    missing.append(arc)
    for extra in ("cli.py", "__init__.py", "browser/provrepair.grass",
                  *(p.relative_to(REPO).as_posix() for p in (REPO / "examples").rglob("*.json*"))):
        if "provrepair/" + extra not in names:
            missing.append("provrepair/" + extra)
    assert not missing, f"not in the wheel: {missing}"
    assert not [n for n in names if n.startswith(("provrepair/tests/", "provrepair/bench/"))]


def test_license_is_spdx_and_shipped(wheel: zipfile.ZipFile) -> None:
    (meta,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    text = wheel.read(meta).decode()
    assert "License-Expression: Apache-2.0" in text
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in wheel.namelist())
    entry = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    assert "provrepair = provrepair.cli:main" in wheel.read(entry[0]).decode()
