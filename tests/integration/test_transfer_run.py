"""`run_transfer` end to end on two committed transfer cases (offline, replay noise, one seed),
in the embedded store: each pair repaired and scored as on the controlled set, the Table 3
form written with the paper's numbers beside ours, the case-by-case comparison with ours."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provrepair.benchmark.results import read_lines
from provrepair.benchmark.transfer.run import run_transfer
from provrepair.provenance.errors import InputError


def test_a_tiny_transfer_run_scores_the_cases(tmp_path: Path, bench_env: str) -> None:
    out = tmp_path / "transfer"
    result, text = run_transfer("no_repair,dependency_guided", (42,), out, limit=2)
    lines = read_lines(out / "seed-42")
    assert sorted({(x["method"], x["status"]) for x in lines}) == [
        ("dependency_guided", "repaired"), ("no_repair", "repaired")]
    assert len(lines) == 4 and all(x["domain"] == "retail" and x["primary_fault_type"] == "poisoned"
                                   for x in lines)
    ours, none = result["methods"]["dependency_guided"], result["methods"]["no_repair"]
    recovered = sum(1 for x in lines if x["method"] == "dependency_guided" and x["recovered"])
    assert ours["recovered"] == [recovered]
    assert ours["metrics"]["recovery"]["values"] == [recovered / 2]
    # ours deletes every diagnosed (poisoned) record; no repair changes nothing
    assert ours["metrics"]["faulty_removal"]["mean"] == 1.0
    assert none["metrics"]["recovery"]["mean"] == none["metrics"]["faulty_removal"]["mean"] == 0.0
    assert none["differ_from_reference"] == {"only_this": [0], "only_reference": [recovered]}
    assert result["cases"] == 2 and result["replay_noise"] == 0.05
    table = text.split("### Transfer set", 1)[1]
    assert "| Ours | " in table and " 0.680 " in table   # the paper's Table 3 beside ours
    assert json.loads((out / "transfer.json").read_text())["methods"].keys() == {
        "no_repair", "dependency_guided"}
    assert (out / "transfer.csv").read_text().startswith("Method,Rec,Rec (paper),")


def test_no_seed_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--seeds: give at least one seed"):
        run_transfer("no_repair", (), tmp_path)
