"""Every benchmark script (bench/*.py with a `__main__`) runs, as a real subprocess, on the
tiniest input it accepts (issue 26: scripts no test runs rot). bench/ holds the maintained
benchmarks only (issue 40); the one-off experiments are in git history, their results and
commands in bench/results/ (bench/results/README.md). Each run must exit 0 and print
the table row or figure its published command prints, with a number in it. The numbers
themselves are not checked: speed claims live in BENCHMARKS.md, not in timed tests.

tests/unit/test_layers.py checks the other half: the scripts import only the installed library.
Most scripts start a private embedded server of their own; they still get the session store's
environment (the `cli` fixture), so one that used the default store would use the test's graph.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bolt_server import BoltServer
from tests.conftest import Cli

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
CONSOLE = str(Path(sys.executable).with_name("provrepair"))
EXAMPLE = str(REPO / "examples" / "shopping_poisoned_price.json")
NUMBER = r"[\d,.]+"

# script → (its tiniest arguments, what its stdout must match)
TINY: dict[str, tuple[list[str], str]] = {
    "cli_start": (["--before", CONSOLE, "--after", CONSOLE, "--example", EXAMPLE, "--reps", "1"],
                  rf"\| `provrepair tasks` \| {NUMBER} \| {NUMBER} \|[\s\S]*"
                  rf"\| `provrepair db stop` \| {NUMBER} \| {NUMBER} \|"),
    # the FalkorDB defect reproduced on raw redis-server: the guarded statements stay clean
    "engine_delete_repro": ([], r"(?m)^guarded +clean: \d+ rows"),
    "effects_log": (["--steps", "20", "--reps", "1"],
                    rf"\| 20 \| {NUMBER} \| effects \| {NUMBER} \|.* \| True \|"),
    "ingest": (["--sizes", "1000", "--reps", "1", "--recorder-steps", "50",
                "--recorder-preload", "1000"],
               rf"### Batched ingest[\s\S]*\n\| {NUMBER} \| {NUMBER} \| {NUMBER} \|"),
    "live_conversation": (["--requests", "3", "--repaired"],
                          r'"mode": "extend",[^}]*"rebuilds": 1,\s*"extensions": 2'
                          r'[\s\S]*"mode": "merge",[^}]*"rebuilds": 3'),
    "namespace": (["scale", "--conversations", "12", "--readers", "3", "--steps", "10",
                   "--reps", "1"], rf"one task, same region: median {NUMBER} s .*ratio {NUMBER}x"),
    "plan": (["--sizes", "1000", "--regions", "10", "--reps", "1", "--explosion-width", "2",
              "--explosion-depth", "3"],
             rf"### compute_plan vs plan_in_memory[\s\S]*\n\| {NUMBER} \| 10 \|"),
    # the control run alone (an unmutated copy of the tracked files, its property test with
    # 5 examples): a planted bug takes 10-70 s to be caught, and tests/unit/test_mutants.py
    # already checks that every mutant still applies
    "property": (["mutants", "--examples", "5", "--only", "(no mutant, the control run only)"],
                 r"control \(no bug planted\) +passes"),
    # one race trial of bench/reliability.py's harness (a private store, the console script)
    "reliability": (["--trials", "1", "--steps", "50", "--only", "repair-vs-replace"],
                    r"repair-vs-replace +trials +1 +correct +1"),
    "restart": (["--nodes", "100", "--case-steps", "50"],
                rf"\| +{NUMBER} \| +{NUMBER} \| +{NUMBER} \| +{NUMBER} \({NUMBER}×\)"),
    "trace_scale": (["--turns", "10", "--history-turns", "5"],
                    r"window +10 turns: .*ingest_s [\d.]+.*\nhistory +5 turns"),
    "trace_soundness": (["--limit", "3", "--per-shape", "1"],
                        r"\| otel-json-history \| \d+ \| \d+ \| 0 \|(?s:.*)"
                        r"\| all: missed / faults \(not in the run\) \| 0 / \d+ \(0\) \|"),
    # one source line of the transfer set rebuilt and compared with its committed case and
    # source line (running the set: tests/integration/test_transfer_sweep.py)
    "transfer": (["build", "--source-file", "tests/cases/transfer/tau2_retail_task_2.jsonl",
                  "--check"], r"identical: 1 case files and 1 source lines equal to "),
}
# needs what the suite provides (a Bolt server): a test of its own
OWN_TEST = {"bolt_engines"}


def scripts() -> set[str]:
    """bench/*.py with a `if __name__ == "__main__":` block (not the helper modules)."""
    found = set()
    for path in BENCH.glob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
                found.add(path.stem)
    return found


def run(script: str, args: list[str], env: dict[str, str]) -> str:
    """The script's stdout, after asserting it exited 0 (its stderr in the message if not)."""
    done = subprocess.run([sys.executable, str(BENCH / f"{script}.py"), *args], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return done.stdout


def test_every_bench_script_has_a_tiny_run() -> None:
    assert scripts() == set(TINY) | OWN_TEST


@pytest.mark.parametrize("script", sorted(TINY))
def test_bench_script_runs_tiny(script: str, cli: Cli) -> None:
    args, expected = TINY[script]
    out = run(script, args, cli.env)
    assert re.search(expected, out), f"{script} printed no {expected!r}:\n{out[-3000:]}"


@pytest.mark.neo4j
def test_bolt_engines_on_the_suites_bolt_server(bolt_server: BoltServer, bolt_database: str,
                                                cli: Cli) -> None:
    """Against the suite's Bolt server (`--bolt-uri`, as with an existing Neo4j), in the
    test's own database, which the script empties first; exit 0 means both engines planned alike."""
    env = {**cli.env, "PROVREPAIR_TEST_BOLT_USER": bolt_server.user,
           "PROVREPAIR_TEST_BOLT_PASSWORD": bolt_server.password,
           "PROVREPAIR_TEST_BOLT_DATABASE": bolt_database}
    out = run("bolt_engines", ["--regions", "10", "--random", "1", "--reps", "1",
                               "--bolt-uri", bolt_server.uri], env)
    assert re.search(rf"\| FalkorDB .*\| {NUMBER} s \({NUMBER}/s\) \| \d+; ", out), out
    assert re.search(rf"\| Bolt server at .*\| {NUMBER} s \({NUMBER}/s\) \| \d+; ", out), out
