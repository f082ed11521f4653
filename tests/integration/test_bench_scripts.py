"""Every benchmark script (bench/*.py with a `__main__`) runs, as a real subprocess, on the
tiniest input it accepts (issue 26: scripts no test runs rot). Each run must exit 0 and print
the table row or figure its published command prints, with a number in it. The numbers
themselves are not checked: speed claims live in BENCHMARKS.md, not in timed tests.

tests/unit/test_layers.py checks the other half: the scripts import only the installed library.
Most scripts start a private embedded server of their own; they still get the session store's
environment (the `cli` fixture), so one that used the default store would use the test's graph.
"""

from __future__ import annotations

import ast
import json
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
    "agenttrace_roots": (["--limit", "3"],
                         rf"{NUMBER} cases; the root cause is the final answer in {NUMBER}"),
    "cli_start": (["--before", CONSOLE, "--after", CONSOLE, "--example", EXAMPLE, "--reps", "1"],
                  rf"\| `provrepair tasks` \| {NUMBER} \| {NUMBER} \|"),
    # the FalkorDB defect reproduced on raw redis-server: the guarded statements stay clean
    "engine_delete_repro": ([], r"(?m)^guarded +clean: \d+ rows"),
    "index_keys": (["--nodes", "100"], rf"int_list +{NUMBER} ns per lookup"),
    "ingest": (["--sizes", "1000", "--reps", "1", "--recorder-steps", "50",
                "--recorder-preload", "1000"],
               rf"### Batched ingest[\s\S]*\n\| {NUMBER} \| {NUMBER} \| {NUMBER} \|"),
    # the A/B scripts check out HEAD as the "old" side (a git worktree, removed afterwards)
    "ingest_ab": (["--base", "HEAD", "--elements", "1000", "--rounds", "1"],
                  rf"per-round new/old ratios: \[{NUMBER}\] median {NUMBER}"),
    "ingest_vault": (["--base", "HEAD", "--tasks", "2", "--window", "1"],
                     rf"new: first 1 tasks {NUMBER} ms/task"),
    "live_conversation": (["--requests", "3"],
                          r'"mode": "extend",[^}]*"rebuilds": 1,\s*"extensions": 2'),
    "otel": (["--spans", "100"], r"explicit evidence +affected \d+, quarantined \d+"),
    "plan": (["--sizes", "1000", "--regions", "10", "--reps", "1", "--explosion-width", "2",
              "--explosion-depth", "3"],
             rf"### compute_plan vs plan_in_memory[\s\S]*\n\| {NUMBER} \| 10 \|"),
    "plan_ab": (["--base", "HEAD", "--region", "10", "--rounds", "1"],
                rf"new: plan p50 {NUMBER} ms"),
    "plan_phases": (["--region", "10", "--plans", "1"], rf"in-memory reference {NUMBER}"),
    "plan_steady": (["--nodes", "1000", "--seconds", "0.01", "--region", "10"],
                    rf"plan p50 +{NUMBER} ms +server +{NUMBER} ms"),
    "prep_ab": (["--base", "HEAD", "--elements", "1000", "--rounds", "1"],
                rf"per-round new/old ratios: \[{NUMBER}\] median {NUMBER}"),
    # the control run alone (an unmutated copy of the tracked files, its property test with
    # 5 examples): a planted bug takes 10-70 s to be caught, and tests/unit/test_mutants.py
    # already checks that every mutant still applies
    "property": (["mutants", "--examples", "5", "--only", "(no mutant, the control run only)"],
                 r"control \(no bug planted\) +passes"),
    "reach_variants": (["--region", "10", "--reps", "1", "--rounds", "1"],
                       rf"per_hop \(the product\) +{NUMBER}"),
    # one race trial of bench/reliability.py's harness (a private store, the console script)
    "reliability": (["--trials", "1", "--steps", "50", "--only", "repair-vs-replace"],
                    r"repair-vs-replace +trials +1 +correct +1"),
    "restart": (["--nodes", "100", "--case-steps", "50"],
                rf"\| +{NUMBER} \| +{NUMBER} \| +{NUMBER} \| +{NUMBER} \({NUMBER}×\)"),
    "support_variants": (["--region", "10", "--reps", "1"], rf"\n  typed +{NUMBER}"),
    # --jobs 1 against --jobs 2 on one case of one setting, two methods
    "sweep_jobs": (["--limit", "1", "--seeds", "42", "--levels", "1.0", "--noise", "0",
                    "--methods", "no_repair,dependency_guided", "--jobs", "2"],
                   rf"ratio {NUMBER}x(?s:.*)files: identical"),
    "trace_scale": (["--turns", "10", "--history-turns", "5"],
                    r"window +10 turns: .*ingest_s [\d.]+.*\nhistory +5 turns"),
    "trace_soundness": (["--limit", "3", "--per-shape", "1"],
                        r"\| otel-json-history \| \d+ \| \d+ \| 0 \|(?s:.*)"
                        r"\| all: missed / faults \(not in the run\) \| 0 / \d+ \(0\) \|"),
}
# needs what the suite provides (a Bolt server; a sweep's output folder): tests of their own
OWN_TEST = {"bolt_engines", "selective_misses", "sweep_readings"}
# needs `falkordb-bulk-insert`, which is not a dependency of provrepair (its docstring says how
# to install it apart): only its --help runs, so its imports and options stay sound
HELP_ONLY = {"bulk_layout": "--loader"}


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
    assert scripts() == set(TINY) | OWN_TEST | set(HELP_ONLY)


@pytest.mark.parametrize("script", sorted(TINY))
def test_bench_script_runs_tiny(script: str, cli: Cli) -> None:
    args, expected = TINY[script]
    out = run(script, args, cli.env)
    assert re.search(expected, out), f"{script} printed no {expected!r}:\n{out[-3000:]}"


@pytest.mark.parametrize("script", sorted(HELP_ONLY))
def test_bench_script_without_its_tool_prints_help(script: str, cli: Cli) -> None:
    assert HELP_ONLY[script] in run(script, ["--help"], cli.env)


def test_sweep_readings_reads_a_real_sweep(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    done = cli("bench", "sweep", "--levels", "1.0", "--seeds", "42", "--replay-noise", "0",
               "--limit", "3", "--methods", "dependency_guided", "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    readings = json.loads(run("sweep_readings", ["--out", str(out), "--methods",
                                                 "dependency_guided"], cli.env))
    tally = readings["noise 0 @1.0"]["dependency_guided"]
    assert tally["cases"] == 3 and 0 <= tally["recovered"] <= 3
    assert sum(n for key, n in tally.items() if key.endswith(" cases")) == 3  # per fault type


def test_selective_misses_reruns_the_cases_a_sweep_says_ours_missed(cli: Cli,
                                                                     tmp_path: Path) -> None:
    """A tiny sweep at the targets' setting; one case's line for ours is then marked missed, so
    the script must pick exactly that case, rerun it and find that ours recovers it."""
    out = tmp_path / "sweep"
    done = cli("bench", "sweep", "--levels", "0.8", "--seeds", "42", "--replay-noise", "0.05",
               "--limit", "3", "--methods", "dependency_guided,no_selective_replay",
               "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    results = out / "seed-42" / "results-0.8-noise-0.05" / "results.jsonl"
    lines = [json.loads(t) for t in results.read_text(encoding="utf-8").splitlines()]
    recovered = {(x["case"], x["method"]) for x in lines if x["recovered"]}
    case = next(c for c, m in recovered if m == "no_selective_replay"
                and (c, "dependency_guided") in recovered)
    for line in lines:
        if (line["case"], line["method"]) == (case, "dependency_guided"):
            line["recovered"] = False
    results.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    rows = json.loads(run("selective_misses", ["--out", str(out), "--json"], cli.env))
    assert [(r["seed"], r["case"]) for r in rows] == [(42, case)]
    assert rows[0]["ours"] and rows[0]["ablation"] and rows[0]["cause"] == "not reproduced"
    text = run("selective_misses", ["--out", str(out)], cli.env)
    assert f"seed 42 {case}: not reproduced" in text and text.rstrip().endswith(
        "1 cases: early cutoff 0, replay set 0, not reproduced 1")


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
