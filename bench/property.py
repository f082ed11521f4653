"""The planner's property test, in its two profiles, and the bugs the default profile catches.

    python bench/property.py deep [--examples 5000]    the long run (not part of `make test`)
    python bench/property.py mutants [--examples 500] [--only TEXT]
                                                       plant each bug of bench/mutants.json in a
                                                       copy of the package; the property test
                                                       must fail on every one

`make test` runs tests/integration/test_planner_property.py with its default profile (500 random
provenance graphs, PROVREPAIR_PROPERTY_EXAMPLES). The deep profile runs the same test with more
examples. The mutant run shows what the default profile is worth: each planted bug is a one-line
change to the planner (a wrong comparison, a dropped condition), applied to a copy of the
tracked files in a temporary folder named `provrepair` that is put first on PYTHONPATH, so the
installed package is untouched. A control run of the unmutated copy must pass.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROPERTY_TEST = "tests/integration/test_planner_property.py"


def load_mutants() -> list[dict[str, str]]:
    mutants: list[dict[str, str]] = json.loads((REPO / "bench" / "mutants.json").read_text())["mutants"]
    return mutants


def copy_tracked_files(target: Path) -> None:
    """The working tree's tracked files (with uncommitted edits), nothing else."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], check=True,
                            capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def plant(package: Path, mutant: dict[str, str]) -> None:
    path = package / mutant["file"]
    text = path.read_text()
    if text.count(mutant["find"]) != 1:
        raise SystemExit(f"mutant {mutant['name']!r} no longer applies to {mutant['file']}: "
                         "update bench/mutants.json")
    path.write_text(text.replace(mutant["find"], mutant["replace"]))


def run_property_test(cwd: Path, examples: int, pythonpath: Path | None) -> tuple[bool, float]:
    """(passed, seconds) of one pytest run of the property test, stopping at the first failure."""
    env = dict(os.environ, PROVREPAIR_PROPERTY_EXAMPLES=str(examples))
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    # the embedded engine only (the profiles measured in BENCHMARKS.md); the Bolt variant runs
    # in make test
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", "not neo4j",
               PROPERTY_TEST]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    return done.returncode == 0, time.perf_counter() - started


def check_copy_is_imported(package: Path) -> None:
    """The copy, not the installed package, must be what `import provrepair` finds."""
    env = dict(os.environ, PYTHONPATH=str(package.parent))
    found = subprocess.run([sys.executable, "-c", "import provrepair; print(provrepair.__file__)"],
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    if not found.startswith(str(package)):
        raise SystemExit(f"the mutant copy is shadowed by {found}")


def mutants(examples: int, only: str) -> int:
    rows: list[tuple[str, str, float]] = []
    for mutant in [None, *(m for m in load_mutants() if only in m["name"])]:
        with tempfile.TemporaryDirectory(prefix="provrepair-mutant-") as tmp:
            package = Path(tmp) / "provrepair"
            copy_tracked_files(package)
            check_copy_is_imported(package)
            if mutant is not None:
                plant(package, mutant)
            passed, seconds = run_property_test(package, examples, Path(tmp))
        name = "control (no bug planted)" if mutant is None else mutant["name"]
        verdict = ("passes" if passed else "FAILS") if mutant is None else \
            ("caught" if not passed else "MISSED")
        rows.append((name, verdict, seconds))
        print(f"{name:<70} {verdict:<8} {seconds:6.1f} s", flush=True)
    missed = [r for r in rows[1:] if r[1] == "MISSED"]
    print(f"\n{len(rows) - 1 - len(missed)}/{len(rows) - 1} planted bugs caught with {examples} "
          f"examples; machine: {platform.platform()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}")
    return 1 if missed or rows[0][1] != "passes" else 0


def deep(examples: int) -> int:
    passed, seconds = run_property_test(REPO, examples, None)
    print(f"property test, {examples} examples: {'passed' if passed else 'FAILED'} in "
          f"{seconds:.0f} s ({platform.platform()}, {os.cpu_count()} cores)")
    return 0 if passed else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="profile", required=True)
    sub.add_parser("deep", help="the long run").add_argument("--examples", type=int, default=5000)
    planted = sub.add_parser("mutants", help="planted bugs")
    planted.add_argument("--examples", type=int, default=500)
    planted.add_argument("--only", default="", help="only the mutants whose name contains this")
    args = parser.parse_args(argv)
    return deep(args.examples) if args.profile == "deep" else mutants(args.examples, args.only)


if __name__ == "__main__":
    sys.exit(main())
