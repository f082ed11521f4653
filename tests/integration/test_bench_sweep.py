"""`bench sweep` end to end on a small stratified sample, and `bench clean` (both engines for
clean: the scratch graphs on FalkorDB, the `<task>::<method>` tasks on Neo4j)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from provrepair.benchmark.cases import graph_name, load_cases
from provrepair.benchmark.generate import generate_cases
from provrepair.benchmark.run import RUN_LOCK
from provrepair.benchmark.store import bench_store
from provrepair.benchmark.sweep import Wanted
from provrepair.provenance.lock import new_owner_id, task_lock
from tests.conftest import Cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shopping_poisoned_price.json"


def test_sweep_writes_one_table_and_plot_over_the_levels(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    args = ("bench", "sweep", "--levels", "1.0,0.7", "--seeds", "42,7", "--replay-noise",
            "0,0.2", "--limit", "4", "--methods", "no_repair,dependency_guided",
            "--out", str(out), "--json")
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    sweep = json.loads(done.stdout)
    assert (sweep["cases"], sweep["levels"], sweep["seeds"], sweep["replay_noise"]) == (
        4, [1.0, 0.7], [42, 7], [0.0, 0.2])
    ours = sweep["methods"]["dependency_guided"]
    assert set(ours) == {"0.0", "0.2"} and set(ours["0.0"]) == {"1.0", "0.7"}
    recovery = ours["0.0"]["1.0"]["recovery"]
    assert len(recovery["values"]) == 2 and recovery["mean"] is not None and recovery["sd"] is not None
    assert sweep["methods"]["no_repair"]["0.2"]["0.7"]["recovery"]["mean"] == 0.0
    assert all(len(counts) == 2 for counts in sweep["gold_claims"].values())
    text = (out / "sweep.md").read_text()
    assert "replay noise 0.2 (N = 4 cases per level and seed, seeds 42, 7; mean ± sd" in text
    assert "Gold contaminated claims" in text and " ± " in text
    for rate in ("0", "0.2"):
        assert (out / f"quality_vs_fidelity-noise-{rate}.png").stat().st_size > 0
    assert json.loads((out / "seed-7" / "cases-0.7" / "manifest.json").read_text())["seed"] == 7
    tables = (out / "seed-42" / "results-1.0-noise-0.2" / "tables.md").read_text()
    assert "fidelity 1.0, replay noise 0.2, seed 42" in tables and "gold contaminated" in tables
    noisy = [json.loads(t) for t in (out / "seed-42" / "results-1.0-noise-0.2" / "results.jsonl")
             .read_text().splitlines()]
    assert {line["replay_noise"] for line in noisy} == {0.2}
    assert {line["reasoner"] for line in noisy} == {"offline+noise0.2@42"}
    again = cli(*args)  # reused, resumed
    assert json.loads(again.stdout) == sweep


def test_a_sample_of_another_size_is_generated_again_saying_so(cli: Cli, tmp_path: Path) -> None:
    """A folder holding a `--limit 3` sample is not reused by a run asking for more cases."""
    out = tmp_path / "sweep"
    common = ("bench", "sweep", "--levels", "1.0", "--seeds", "42", "--replay-noise", "0",
              "--methods", "no_repair", "--out", str(out), "--json")
    small = cli(*common, "--limit", "3")
    assert small.returncode == 0 and json.loads(small.stdout)["cases"] == 3
    bigger = cli(*common, "--limit", "5")
    assert bigger.returncode == 0, bigger.stderr
    assert json.loads(bigger.stdout)["cases"] == 5
    assert "holds another sample" in bigger.stderr and "3 cases; wanted 5" in bigger.stderr
    manifest = json.loads((out / "seed-42" / "cases-1.0" / "manifest.json").read_text())
    assert manifest["cases"] == 5
    assert len([p for p in (out / "seed-42" / "cases-1.0").glob("*.json")]) == 6  # + manifest


def test_a_full_run_does_not_match_a_limited_sample() -> None:
    full, limited = Wanted(42, 1.0, None, 0.5), Wanted(42, 1.0, 3, 0.5)
    manifest = {"seed": 42, "fidelity": 1.0, "answerable_share": 0.5, "cases": 3}
    assert limited.matches(manifest) and not full.matches(manifest)
    assert full.matches({**manifest, "cases": 150})


def test_sweep_refuses_bad_levels_and_methods_before_any_work(cli: Cli, tmp_path: Path) -> None:
    for args, needle in ((["--levels", "1.0,x"], "not a list of numbers"),
                         (["--levels", "1.5"], "fidelity 1.5"),
                         (["--methods", "nope"], "unknown method 'nope'")):
        done = cli("bench", "sweep", *args, "--out", str(tmp_path / "o"))
        assert done.returncode == 2 and needle in done.stderr, done.stderr
    assert not (tmp_path / "o").exists()


def test_clean_removes_benchmark_graphs_and_keeps_the_users(engine_cli: Cli,
                                                            tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    for case in generate_cases(42, limit=2):
        (cases / f"{case.task_id}.json").write_text(case.model_dump_json())
    assert engine_cli("ingest", str(EXAMPLE)).returncode == 0
    ran = engine_cli("bench", "run", "--cases", str(cases), "--methods", "no_repair",
                     "--out", str(tmp_path / "out"), "--json")
    assert ran.returncode == 0, ran.stderr
    done = engine_cli("bench", "clean", "--json")
    assert done.returncode == 0, done.stderr
    removed = json.loads(done.stdout)
    names = removed.get("graphs") or removed.get("tasks")
    assert names and all("bench" in n or "::no_repair" in n for n in names)
    tasks = [t["task_id"] for t in json.loads(engine_cli("tasks", "--json").stdout)]
    assert tasks == [json.loads(EXAMPLE.read_text())["task_id"]]
    assert json.loads(engine_cli("bench", "clean", "--json").stdout) in ({"graphs": []},
                                                                        {"tasks": []})


def test_clean_keeps_what_a_live_run_uses(engine_cli: Cli, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`bench clean` beside a running benchmark keeps the run's store and says who uses it
    (it used to drop the graph under the run, which then failed with a misleading error)."""
    cases = tmp_path / "cases"
    cases.mkdir()
    for case in generate_cases(42, limit=2):
        (cases / f"{case.task_id}.json").write_text(case.model_dump_json())
    ran = engine_cli("bench", "run", "--cases", str(cases), "--methods", "no_repair",
                     "--out", str(tmp_path / "out"), "--json")
    assert ran.returncode == 0, ran.stderr
    for key, value in engine_cli.env.items():
        if key.startswith("PROVREPAIR_"):
            monkeypatch.setenv(key, value)
    items, _ = load_cases(cases)
    with bench_store(graph_name(cases, items)) as store, \
            task_lock(store, RUN_LOCK, new_owner_id("bench"), "bench"):  # a run, alive
        done = engine_cli("bench", "clean", "--json")
        assert done.returncode == 0, done.stderr
        removed = json.loads(done.stdout)
        (busy,) = removed["busy"]
        assert busy["pid"] == os.getpid() and busy["holder"].startswith("bench-")
        assert not any(n.startswith(graph_name(cases, items)) for n in removed.get("graphs", []))
        assert removed.get("tasks", []) == []
        text = engine_cli("bench", "clean")
        assert "a benchmark run is using it" in text.stdout
    after = json.loads(engine_cli("bench", "clean", "--json").stdout)  # the run ended
    assert "busy" not in after and (after.get("graphs") or after.get("tasks"))


def test_a_reset_recovers_only_where_the_conversation_holds_the_answer(cli: Cli,
                                                                      tmp_path: Path) -> None:
    """The benchmark can say yes to a baseline: with answerable sessions, full reset rebuilds
    some answers from the conversation; without, it cannot (every answer lives in memory)."""
    recovered = {}
    for share in ("0.0", "1.0"):
        cases, out = tmp_path / f"cases-{share}", tmp_path / f"out-{share}"
        made = cli("bench", "generate", "--limit", "9", "--answerable", share,
                   "--out", str(cases), "--json")
        assert made.returncode == 0, made.stderr
        ran = cli("bench", "run", "--cases", str(cases), "--methods", "full_reset",
                  "--out", str(out), "--json")
        assert ran.returncode == 0, ran.stderr
        recovered[share] = json.loads(ran.stdout)["methods"]["full_reset"]["recovered"]
    assert recovered["0.0"] == 0 and recovered["1.0"] > 0
