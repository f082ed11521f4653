"""`run_benchmark` end to end on a few cases with every method (offline): JSON lines, tables,
CSV, plot, a throwaway graph, resumption — metrics computed, not their values."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from provrepair.benchmark.run import run_benchmark
from provrepair.provenance.ingest import list_tasks
from provrepair.provenance.store.config import open_store
from provrepair.repair.methods import method_names
from tests.conftest import Cli

REPLAY = Path(__file__).resolve().parent.parent / "cases" / "replay"
PICK = ["paper_travel_wrong_user.json", "paper_shopping_poisoned_price.json",
        "small_memory_delete.json", "small_side_effect_needs_human.json"]
TABLES = ["main", "ablation", "per_domain", "per_fault_type", "cost", "robustness", "vs_paper"]
COUNTS = ["faulty_removed", "faulty_total", "benign_preserved", "benign_total", "claim_tp",
          "claim_fp", "claim_fn", "replayed_original", "original_steps", "llm_calls", "tokens",
          "reasoner_calls"]


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    directory = tmp_path / "cases"
    directory.mkdir()
    for name in PICK:
        shutil.copy(REPLAY / name, directory / name)
    (directory / "manifest.json").write_text(json.dumps({"cases": PICK}))  # not a case
    raw = json.loads((REPLAY / "small_memory_read.json").read_text())
    raw.pop("evaluation")
    (directory / "no_evaluation.json").write_text(json.dumps(raw))       # cannot be scored
    return directory


def run(cases: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    summary, _ = run_benchmark(cases, "all", "offline", None, out)
    return summary


def lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(t) for t in (out / "results.jsonl").read_text().splitlines() if t.strip()]


def test_run_writes_lines_tables_csv_and_plot_then_resumes(
        cases: Path, tmp_path: Path, bench_env: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    first = run(cases, out, capsys)
    written = lines(out)
    assert len(written) == len(PICK) * len(method_names())
    assert {(x["case"], x["method"]) for x in written} == {
        (json.loads((REPLAY / n).read_text())["task_id"], m) for n in PICK for m in method_names()}
    for line in written:
        if line["method"] == "llm_judge":
            assert line["status"] == "not_run" and "--reasoner openai" in line["reason"]
            continue
        assert line["status"] in ("repaired", "partial", "needs_human"), line
        assert isinstance(line["recovered"], bool)
        assert all(isinstance(line[k], int) for k in COUNTS), line
        assert line["original_steps"] > 0 and line["faulty_total"] > 0
        assert line["recurred"] in (True, False, None) and line["probe"]
        assert line["oracle_assisted"] is (line["method"] == "memaudit_oracle")
        assert {"domain", "primary_fault_type", "n_faults", "store_bucket"} <= set(line)

    methods = first["methods"]
    assert methods["llm_judge"]["status"] == "not_run"
    for name in set(method_names()) - {"llm_judge"}:
        assert methods[name]["n"] == len(PICK)
        assert isinstance(methods[name]["recovery"], float)
        assert methods[name]["replay_ratio"] is not None
    assert methods["no_repair"]["recovery"] == 0.0 and methods["no_repair"]["replay_ratio"] == 0.0

    text = (out / "tables.md").read_text()
    for title in ("Main results", "Ablations", "Per domain", "Per primary fault type",
                  "Repair cost breakdown", "Robustness slices", "Ours (N = 4) beside the paper"):
        assert f"### {title}" in text
    assert "| LLM-judge repair | 0 | not run |" in text and "| Ours |" in text
    for table in TABLES:
        header = (out / f"{table}.csv").read_text().splitlines()[0]
        assert header.startswith("Method,")
    assert (out / "recovery_vs_llm_calls.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((out / "summary.json").read_text()) == first

    # the user's graph got nothing, and PROVREPAIR_GRAPH is left as it was
    with open_store() as store:
        assert list_tasks(store) == []

    # a rerun skips every finished pair and reproduces the same results
    again = run(cases, out, capsys)
    assert len(lines(out)) == len(written) and again == first

    # a run killed mid-way: the last pairs missing and a torn line; the rerun completes them
    kept = (out / "results.jsonl").read_text().splitlines()[:-5]
    (out / "results.jsonl").write_text("\n".join(kept) + '\n{"case": "torn')
    resumed = run(cases, out, capsys)
    assert len(lines_ok(out)) == len(written) and resumed == first


def lines_ok(out: Path) -> list[dict[str, Any]]:
    result = []
    for text in (out / "results.jsonl").read_text().splitlines():
        try:
            result.append(json.loads(text))
        except json.JSONDecodeError:
            continue
    return result


def test_cli_bench_run(cli: Cli, cases: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli-out"
    done = cli("bench", "run", "--cases", str(cases), "--methods", "no_repair,dependency_guided",
               "--limit", "2", "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert set(summary["methods"]) == {"no_repair", "dependency_guided"}
    assert summary["methods"]["dependency_guided"]["n"] == 2
    assert "no_evaluation.json" in done.stderr  # the skipped case is named
    unknown = cli("bench", "run", "--cases", str(cases), "--methods", "nope", "--out", str(out))
    assert unknown.returncode == 2 and "unknown method 'nope'" in unknown.stderr


def test_llm_judge_runs_with_an_llm_and_its_decision_calls_are_counted(
        tmp_path: Path, bench_env: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tests.integration.test_methods_llm_judge import ANSWER, judge_plan
    from tests.openai_double import ChatDouble, Reply

    cases = tmp_path / "one"
    cases.mkdir()
    shutil.copy(REPLAY / "paper_shopping_poisoned_price.json", cases / "case.json")
    chat = ChatDouble()
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("OPENAI_BASE_URL", chat.start())
    monkeypatch.setenv("OPENAI_MODEL", "double-model")
    # the plan, then the replay of s_012; the recurrence probe then meets scripted failures
    chat.script = [judge_plan(), Reply(json.dumps({"content": ANSWER, "cited_ids": ["u_2"]}))]
    try:
        run_benchmark(cases, "llm_judge", "openai", None, tmp_path / "out")
    finally:
        chat.stop()
    capsys.readouterr()
    [line] = lines(tmp_path / "out")
    assert (line["status"], line["reasoner"], line["model"]) == ("repaired", "openai", "double-model")
    assert line["recovered"] is True and line["answer"] == ANSWER
    assert (line["decision_llm_calls"], line["llm_calls"], line["tokens"]) == (1, 2, 100)
    assert line["recurred"] is True and line["probe"] == "unresolved_answer"


class Labels:
    """A Progress that keeps the labels of its bars."""

    def __init__(self) -> None:
        self.labels: list[str] = []

    def start(self, label: str, total: int) -> None:
        self.labels.append(label)

    def advance(self, n: int = 1, item: str | None = None) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def finish(self) -> None:
        pass


def test_progress_tables_and_plot_name_the_run(cases: Path, tmp_path: Path, bench_env: str) -> None:
    """A sweep runs many of these: each bar, table header and plot title says which."""
    progress = Labels()
    tag = "fidelity 0.8, replay noise 0.05, seed 7"
    summary, text = run_benchmark(cases, "no_repair,dependency_guided", "offline", None,
                                  tmp_path / "out", tag=tag, progress=progress)
    assert len(progress.labels) == 2 and all(tag in label for label in progress.labels)
    assert tag in text and tag in summary["run"]
    assert summary["cases"] == 4 and summary["gold_claims"] >= 1
