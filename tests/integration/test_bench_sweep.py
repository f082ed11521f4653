"""`bench sweep` end to end on a small stratified sample, and `bench clean` (both engines for
clean: the scratch graphs on FalkorDB, the `<task>::<method>` tasks on Neo4j)."""

from __future__ import annotations

import json
from pathlib import Path

from provrepair.benchmark.generate import generate_cases
from tests.conftest import Cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shopping_poisoned_price.json"


def test_sweep_writes_one_table_and_plot_over_the_levels(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    done = cli("bench", "sweep", "--levels", "1.0,0.7", "--limit", "4",
               "--methods", "no_repair,dependency_guided", "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    sweep = json.loads(done.stdout)
    assert sweep["cases"] == 4 and sweep["levels"] == [1.0, 0.7]
    ours = sweep["methods"]["dependency_guided"]
    assert set(ours) == {"1.0", "0.7"} and ours["1.0"]["recovery"] is not None
    assert sweep["methods"]["no_repair"]["0.7"]["recovery"] == 0.0
    assert "N = 4 per level" in (out / "sweep.md").read_text()
    assert (out / "quality_vs_fidelity.png").stat().st_size > 0
    assert json.loads((out / "cases-0.7" / "manifest.json").read_text())["fidelity"] == 0.7
    assert "Main results (N = 4)" in (out / "results-1.0" / "tables.md").read_text()
    again = cli("bench", "sweep", "--levels", "1.0,0.7", "--limit", "4",  # reused, resumed
                "--methods", "no_repair,dependency_guided", "--out", str(out), "--json")
    assert json.loads(again.stdout) == sweep


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
