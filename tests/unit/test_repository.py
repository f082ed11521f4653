"""The published repository stands alone: nothing points outside it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# the founders' notes one level up (not published), and absolute paths of a developer's machine
OUTSIDE = re.compile(r"\.\./shared|(?<![\w.])/(work|home|root|Users)/[\w.-]+")


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True)
    return [REPO / name for name in out.stdout.decode().split("\0") if name
            and not name.endswith("package-lock.json")]


def test_no_path_outside_the_repository() -> None:
    # the clone's own parent folder, unless it is a generic one such as /tmp
    parent = str(REPO.parent) + "/" if len(REPO.parent.parts) > 2 else None
    hits = []
    for path in tracked_files():
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        hits += [f"{path.relative_to(REPO)}:{n}: {line.strip()[:100]}"
                 for n, line in enumerate(text.splitlines(), 1)
                 if OUTSIDE.search(line) or (parent and parent in line)]
    assert not hits, "\n".join(hits)


def test_the_pattern_finds_what_it_should() -> None:
    up, work = "../" + "shared", "/" + "work"
    assert OUTSIDE.search(f"see {up}/spec/x.md") and OUTSIDE.search(f"(`{work}/main/.venv`)")
    assert not OUTSIDE.search("cypher/read/get_task.cypher")


def test_debian_packages_come_without_their_recommends() -> None:
    """`make test` installs Chromium and PostgreSQL from Debian when missing, without their
    recommends (with them Chromium alone pulled 130 packages, avahi-daemon among them)."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8").splitlines()
    installs = [line for line in makefile if "apt-get install" in line]
    assert len(installs) >= 2 and all("--no-install-recommends" in line for line in installs)
