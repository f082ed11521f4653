"""The built wheel: one top-level name, every package and data file inside, SPDX license.

Builds the wheel from a copy of the repository (no build isolation: setuptools comes from the
dev install, nothing is downloaded), then reads the archive.
"""

from __future__ import annotations

import json
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
    for folder in ("provenance", "repair", "loaders", "commands", "cypher", "view", "benchmark"):
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


def test_the_readme_install_from_a_wheel_runs(wheel: zipfile.ZipFile, tmp_path: Path) -> None:
    """README "Installing": the wheel, installed on its own (here into a target folder; its
    dependencies come from this environment), runs and finds its bundled examples there."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "pip wheel --no-deps -w dist ." in readme
    assert "pip install dist/provrepair-0.1.0-py3-none-any.whl" in readme
    assert wheel.filename is not None and Path(wheel.filename).name == "provrepair-0.1.0-py3-none-any.whl"
    target = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet",
                           "--target", str(target), wheel.filename],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    probe = ("import json, provrepair, provrepair.cli, sys; print(provrepair.__file__)")
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}
    where = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=60)
    assert where.returncode == 0, where.stderr[-2000:]
    assert Path(where.stdout.strip()).is_relative_to(target)
    listing = subprocess.run([sys.executable, "-m", "provrepair.cli", "examples", "--json"],
                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert listing.returncode == 0, listing.stderr[-2000:]
    paths = [Path(row["path"]) for row in json.loads(listing.stdout)]
    assert paths and all(p.is_relative_to(target) and p.is_file() for p in paths)
