"""What the A/B benchmarks share (bench/plan_ab.py, prep_ab.py, ingest_ab.py, ingest_vault.py):
an earlier commit checked out where a fresh Python finds it before the installed tree, a
measuring snippet run in a fresh process of either side, rounds alternating the sides, and
the per-round ratios.

The checkout is a `git worktree` of REV in a temporary folder named `provrepair`, the way
bench/property.py plants mutants; its parent goes first on PYTHONPATH of the "old" side.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


@contextmanager
def sides(base_rev: str, prefix: str) -> Iterator[tuple[Path, dict[str, dict[str, str]]]]:
    """(a scratch folder, {"old": env of REV, "new": env of this tree}); cleaned up after."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-q", "--detach",
                        str(base / "provrepair"), base_rev], check=True)
        try:
            yield Path(tmp), {"old": dict(os.environ, PYTHONPATH=str(base)),
                              "new": dict(os.environ)}
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force",
                            str(base / "provrepair")], check=False)


def run_snippet(code: str, args: list[str], env: dict[str, str]) -> Any:
    """Run `code` in a fresh interpreter with `env`; its stdout is one JSON value."""
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout)


def paired_rounds(code: str, args: list[str], envs: dict[str, dict[str, str]],
                  rounds: int) -> dict[str, list[Any]]:
    """`code` run once per side in each round, sides alternating in fresh processes, so that
    machine noise hits both alike; side → its results in round order."""
    runs: dict[str, list[Any]] = {side: [] for side in envs}
    for _ in range(rounds):
        for side, env in envs.items():
            runs[side].append(run_snippet(code, args, env))
    return runs


def print_ratios(runs: dict[str, list[Any]], key: str) -> None:
    """The per-round new/old ratios of `key` (paired in time), sorted, and their median."""
    ratios = sorted(float(n[key]) / float(o[key])
                    for n, o in zip(runs["new"], runs["old"], strict=True))
    print("per-round new/old ratios:", [round(r, 2) for r in ratios],
          "median", round(statistics.median(ratios), 2))


@contextmanager
def shared_server(tmp: Path, envs: dict[str, dict[str, str]]) -> Iterator[None]:
    """One throwaway embedded server under `tmp`, used by this process and by both sides."""
    from provrepair.provenance.store.embedded import EmbeddedServer

    home = tmp / "home"
    os.environ["PROVREPAIR_HOME"] = str(home)
    for env in envs.values():
        env["PROVREPAIR_HOME"] = str(home)
    server = EmbeddedServer(home)
    server.start()
    try:
        yield
    finally:
        server.stop()


@contextmanager
def stored_target(region: int, prefix: str) -> Iterator[tuple[Any, Any]]:
    """(store, case): a throwaway embedded server holding bench/plan.py's target task with an
    affected region of ~`region` nodes, for the planner benchmarks run in one process."""
    from plan import target_case  # bench/plan.py

    from provrepair.provenance.ingest import ingest_case
    from provrepair.provenance.store.config import open_store

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp, shared_server(Path(tmp), {}):
        store = open_store()
        store.ensure_schema()
        case = target_case(region)
        ingest_case(store, case)
        yield store, case


def case_file_rounds(measure: str, base_rev: str, name: str, elements: int, rounds: int, *,
                     server: bool = False) -> dict[str, list[Any]]:
    """`paired_rounds` of `measure` on one case file (bench/ingest.py's synthetic case of
    ~`elements` elements, task `name`), passed as argv[1]; with `server`, on one throwaway
    embedded server that both sides use."""
    from ingest import make_case  # bench/ingest.py

    with sides(base_rev, f"provrepair-{name}-") as (tmp, envs):
        path = tmp / "case.json"
        path.write_text(json.dumps(make_case(name, elements=elements)[0]), encoding="utf-8")
        with shared_server(tmp, envs) if server else nullcontext():
            return paired_rounds(measure, [str(path)], envs, rounds)


def print_element_rates(runs: dict[str, list[Any]]) -> None:
    """Each side's median seconds and elements per second (results with those two keys)."""
    for side in ("old", "new"):
        seconds = statistics.median(r["seconds"] for r in runs[side])
        elements = runs[side][0]["elements"]
        print(f"{side}: {elements:,} elements in {seconds:.2f} s median, "
              f"{elements / seconds:,.0f} elements/s")
