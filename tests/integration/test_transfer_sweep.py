"""`bench generate|sweep --set transfer` end to end on a sample of the transfer set (offline,
replay noise, one seed), in the embedded store: the cases built from the committed source
lines at the committed settings (the committed files), each pair repaired and scored as on
the controlled set, the sweep's files and `bench report`'s readings written, and the paper's
Table 3 form with its numbers beside ours and each method against ours case by case."""

from __future__ import annotations

import json
from pathlib import Path

from provrepair.benchmark.report import compare
from provrepair.benchmark.results import read_lines
from provrepair.benchmark.transfer.build import CASES_DIR
from tests.conftest import Cli


def test_a_tiny_transfer_sweep_scores_the_cases_beside_table_3(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    args = ("bench", "sweep", "--set", "transfer", "--limit", "2", "--seeds", "42",
            "--replay-noise", "0.05", "--methods", "no_repair,dependency_guided", "--jobs", "1",
            "--out", str(out), "--json")
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    sweep = json.loads(done.stdout)
    # the set's own defaults: its committed cases' fidelity and share, one level
    assert (sweep["case_set"], sweep["levels"], sweep["answerable_share"], sweep["cases"]) == (
        "transfer", [0.8], 0.5, 2)
    cases = out / "seed-42" / "cases-0.8"
    names = sorted(p.name for p in cases.glob("tau2_retail_*.json"))
    assert len(names) == 2 and all((cases / n).read_bytes() == (CASES_DIR / n).read_bytes()
                                   for n in names)
    lines = read_lines(out / "seed-42" / "results-0.8-noise-0.05")
    assert sorted({(x["method"], x["status"]) for x in lines}) == [
        ("dependency_guided", "repaired"), ("no_repair", "repaired")]
    assert len(lines) == 4 and all(x["domain"] == "retail" and x["primary_fault_type"] == "poisoned"
                                   for x in lines)
    ours = sweep["methods"]["dependency_guided"]["0.05"]["0.8"]
    recovered = sum(1 for x in lines if x["method"] == "dependency_guided" and x["recovered"])
    assert ours["recovery"]["values"] == [recovered / 2]
    # the Table 3 form's metrics beside the sweep's own: ours deletes every poisoned record
    assert ours["faulty_removal"]["mean"] == 1.0 and ours["llm_calls"]["mean"] == 0.0
    none = sweep["methods"]["no_repair"]["0.05"]["0.8"]
    assert none["recovery"]["mean"] == none["faulty_removal"]["mean"] == 0.0
    outcomes = json.loads((out / "outcomes.json").read_text())
    bits = outcomes["settings"]["noise 0.05 @0.8"]["42"]["methods"]
    assert bits["dependency_guided"]["recovered"].count("1") == recovered
    assert bits["no_repair"]["recovered"] == "00"
    assert (out / "readings.json").exists() and (out / "headline.md").exists()
    text = (out / "sweep.md").read_text()
    table = text.split("#### Transfer set, replay noise 0.05, fidelity 0.8", 1)[1]
    row = next(r for r in table.splitlines() if r.startswith("| No repair |"))
    versus = compare(outcomes, "noise 0.05 @0.8", "no_repair", "dependency_guided", "recovered")
    assert versus is not None and (versus.a_only, versus.b_only) == (0, recovered)
    assert f"| {versus.a_only} / {versus.b_only}: {versus.verdict} |" in row, row
    ours_row = next(r for r in table.splitlines() if r.startswith("| Ours |"))
    assert " | 0.680 | " in ours_row and " | 0.669 | " in ours_row   # the paper's "Ours" beside
    assert (out / "sweep.csv").read_text().count("Method,Rec,Rec (paper),SRec,") == 1


def test_generate_set_transfer_prints_its_source_and_multiplicity(cli: Cli, tmp_path: Path) -> None:
    done = cli("bench", "generate", "--set", "transfer", "--limit", "4", "--seed", "7",
               "--fidelity", "1.0", "--out", str(tmp_path / "cases"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Transfer set: 4 cases from sierra-research/tau2-bench @ "
                                  "07c6aaca2241 (MIT), seed 7, fidelity 1.0, answerable share 0.5\n")
    assert "poisoned records per case: " in done.stdout
    manifest = json.loads((tmp_path / "cases" / "manifest.json").read_text())
    assert (manifest["case_set"], manifest["seed"], manifest["fidelity"], manifest["cases"]) == (
        "transfer", 7, 1.0, 4)
