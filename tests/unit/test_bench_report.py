"""benchmark/report.py on a tiny sweep folder: outcomes per case, the readings summed over
seeds with the recurrence's cause, and comparisons whose verdict is the cases' (a sign test),
not the rounding of the means."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from provrepair.benchmark.report import (
    COMPARISONS,
    OUTCOMES,
    READINGS,
    compare,
    comparisons_text,
    sign_test,
    write_report,
)
from provrepair.provenance.errors import InputError


def line(case: str, method: str, recovered: bool, *, state: bool | None = None,
         probe: str = "ok", kind: str = "poisoned") -> dict[str, Any]:
    return {"case": case, "digest": "d", "method": method, "reasoner": "offline", "model": None,
            "status": "repaired", "recovered": recovered,
            "state_recovered": recovered if state is None else state,
            "recurred": None if not recovered else probe != "ok", "probe": probe,
            "primary_fault_type": kind}


def write_sweep(root: Path, seeds: dict[str, list[dict[str, Any]]]) -> None:
    for seed, lines in seeds.items():
        folder = root / f"seed-{seed}" / "results-0.8-noise-0.05"
        folder.mkdir(parents=True)
        (folder / "results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_sign_test() -> None:
    assert sign_test(0, 0) == 1.0 and sign_test(1, 0) == 1.0
    assert sign_test(6, 0) == 2 / 64 and sign_test(0, 6) == 2 / 64
    assert 0.05 < sign_test(8, 2) < 0.11


def test_readings_and_comparisons_from_the_result_files(tmp_path: Path) -> None:
    ours, ablation = "dependency_guided", "no_selective_replay"
    write_sweep(tmp_path, {
        "42": [line("c1", ours, True, probe="fault_value_active: m_e000", kind="wrong_user"),
               line("c2", ours, True, state=False), line("c1", ablation, True),
               line("c2", ablation, False)],
        "7": [line("c1", ours, False), line("c1", ablation, False),
              line("c3", ours, True, probe="unresolved_answer"), line("c3", ablation, True)]})
    readings = write_report(tmp_path)
    assert {p.name for p in tmp_path.iterdir()} >= {OUTCOMES, READINGS, COMPARISONS}
    tally = readings["settings"]["noise 0.05 @0.8"][ours]
    assert (tally["cases"], tally["recovered"], tally["state recovered"]) == (4, 3, 2)
    assert (tally["recurrences"], tally["recurrence: echo"], tally["recurrence: question"]) == (2, 1, 1)
    assert (tally["poisoned cases"], tally["poisoned recovered"]) == (3, 2)
    outcomes = json.loads((tmp_path / OUTCOMES).read_text())
    rec = compare(outcomes, "noise 0.05 @0.8", ours, ablation, "recovered")
    assert rec is not None and (rec.n, rec.a_only, rec.b_only) == (4, 1, 0)
    assert rec.a_rates == (0.5, 1.0) and rec.verdict == "tie (p = 1.00)"  # seeds 7, 42
    state = compare(outcomes, "noise 0.05 @0.8", ours, ablation, "state_recovered")
    assert state is not None and (state.a_only, state.b_only) == (0, 0)
    assert state.verdict == "tie (no case differs)"
    assert compare(outcomes, "noise 0.05 @0.8", ours, "paper", "recovered") is None  # not run
    text = (tmp_path / COMPARISONS).read_text()
    assert text == comparisons_text(outcomes)
    assert "| Ours vs w/o selective replay | noise 0.05 @0.8 | Rec | 4 | 0.750 ± 0.354 | " \
           "0.500 ± 0.000 | 1 / 0 | tie (p = 1.00) |" in text
    assert "| Ours vs w/o selective replay | Rec | 4 | 0.750 ± 0.354 | 0.500 ± 0.000 | 1 / 0 | " \
           "tie (p = 1.00) |" in (tmp_path / "headline.md").read_text()


def test_a_one_sided_split_is_not_a_tie(tmp_path: Path) -> None:
    ours, floor = "dependency_guided", "replay_everything"
    write_sweep(tmp_path, {"1": [x for i in range(8) for x in
                                 (line(f"c{i}", ours, True), line(f"c{i}", floor, False))]})
    write_report(tmp_path)
    outcomes = json.loads((tmp_path / OUTCOMES).read_text())
    found = compare(outcomes, "noise 0.05 @0.8", ours, floor, "recovered")
    assert found is not None and found.verdict == "Ours > Replay everything (p = 0.00781)"


def test_the_case_sets_of_bench_generate_and_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--set controlled` is benchmark/generate.py, `--set transfer` the transfer set's
    package with what benchmark/sweep.py CaseSet asks of a set (and its own defaults for
    what a user leaves out); a set whose module is missing is a one-line InputError."""
    from provrepair.benchmark import generate, transfer
    from provrepair.commands.bench import CASE_SETS, case_set_module, set_default

    assert case_set_module("controlled") is generate
    assert (generate.SET_NAME, generate.case_count(42, 30), generate.case_count(42, None)) == \
        ("controlled", 30, 150)
    assert set(CASE_SETS) == {"controlled", "transfer"}
    assert case_set_module("transfer") is transfer
    assert (transfer.SET_NAME, transfer.case_count(7, 30), transfer.case_count(7, None),
            transfer.case_count(7, 80)) == ("transfer", 30, 50, 50)
    # a user's value wins; left out, the set's own (the transfer set: its committed cases')
    assert [set_default(generate, o, None) for o in ("fidelity", "answerable", "levels")] == \
        [1.0, 0.0, "1.0,0.8,0.6"]
    assert [set_default(transfer, o, None) for o in ("fidelity", "answerable", "levels")] == \
        [0.8, 0.5, "0.8"]
    assert set_default(transfer, "levels", "1.0,0.6") == "1.0,0.6"
    monkeypatch.setitem(CASE_SETS, "transfer", "no_such_set")
    with pytest.raises(InputError) as raised:
        case_set_module("transfer")
    assert str(raised.value) == ("--set transfer: this installation has no transfer case set "
                                 "(provrepair.benchmark.no_such_set)")


def test_requote_fills_each_quoted_block_from_its_file(tmp_path: Path) -> None:
    from provrepair.benchmark.report import requote

    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "a.md").write_text("| new | table |\n")
    page = tmp_path / "BENCH.md"
    page.write_text("# x\n<!-- quote: results/a.md -->\n| old |\n<!-- end quote -->\ntail\n")
    assert requote(page) == ["results/a.md"]
    assert page.read_text() == "# x\n<!-- quote: results/a.md -->\n| new | table |\n" \
                               "<!-- end quote -->\ntail\n"



def test_report_refuses_a_folder_without_its_result_files(tmp_path: Path) -> None:
    """A committed sweep folder keeps its tables and outcomes.json, not results.jsonl: a
    report there refuses in one line, exit 2, and leaves every file as it was (it once wrote
    an empty outcomes.json over the good one)."""
    from click.testing import CliRunner

    from provrepair.cli import main

    ours = "dependency_guided"
    write_sweep(tmp_path, {"42": [line("c1", ours, True)], "7": [line("c1", ours, False)]})
    write_report(tmp_path)
    (tmp_path / "sweep.json").write_text(json.dumps(
        {"seeds": [42, 7], "levels": [0.8], "replay_noise": [0.05]}))
    for results in tmp_path.glob("seed-*/*/results.jsonl"):
        (results.parent / "tables.md").write_text("| table |\n")
        results.unlink()  # as committed
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    done = CliRunner().invoke(main, ["bench", "report", "--out", str(tmp_path)])
    assert done.exit_code == 2
    assert done.output == (
        f"InputError: bench report --out {tmp_path}: seed-42/results-0.8-noise-0.05 has no "
        f"results.jsonl; a report reads each run's results, which a committed sweep folder "
        f"does not keep (rerun `bench sweep --out {tmp_path}` with its options to make them); "
        f"nothing written\n")
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("lost", ["a seed's run folder", "an empty results.jsonl", "everything"])
def test_report_refuses_a_sweep_missing_a_run(tmp_path: Path, lost: str) -> None:
    ours = "dependency_guided"
    write_sweep(tmp_path, {"42": [line("c1", ours, True)], "7": [line("c1", ours, False)]})
    (tmp_path / "sweep.json").write_text(json.dumps(
        {"seeds": [42, 7], "levels": [0.8], "replay_noise": [0.05]}))
    run = tmp_path / "seed-7" / "results-0.8-noise-0.05"
    if lost == "a seed's run folder":  # sweep.json names it
        (run / "results.jsonl").unlink()
        run.rmdir()
        why = "seed-7/results-0.8-noise-0.05 has no results.jsonl"
    elif lost == "an empty results.jsonl":
        (run / "results.jsonl").write_text("")
        why = "seed-7/results-0.8-noise-0.05/results.jsonl holds no result"
    else:
        for results in tmp_path.glob("seed-*/*/results.jsonl"):
            results.unlink()
            results.parent.rmdir()
        (tmp_path / "sweep.json").unlink()
        why = "no seed-*/results-*-noise-*/results.jsonl"
    with pytest.raises(InputError, match=re.escape(f": {why}; a report reads")):
        write_report(tmp_path)
    assert not (tmp_path / OUTCOMES).exists() and not (tmp_path / COMPARISONS).exists()


def test_requote_refuses_a_quoted_file_that_does_not_exist(tmp_path: Path) -> None:
    from provrepair.benchmark.report import requote

    (tmp_path / "a.md").write_text("| new |\n")
    page = tmp_path / "BENCH.md"
    text = ("<!-- quote: a.md -->\n| old |\n<!-- end quote -->\n"
            "<!-- quote: gone/b.md -->\n| old |\n<!-- end quote -->\n")
    page.write_text(text)
    refused = "quoted file gone/b.md does not exist; nothing rewritten"
    with pytest.raises(InputError, match=re.escape(refused)):
        requote(page)
    assert page.read_text() == text
