"""The issue's small-sample run: 12 generated cases (every domain and fault type), every
method, offline — the metrics are computed for each pair (their values are the benchmark's
business, not this test's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provrepair.benchmark.generate import generate_cases
from provrepair.benchmark.run import run_benchmark
from provrepair.repair.methods import method_names

# per pair: the counts the micro-averaged metrics are made of
COUNTS = ["recovered", "faulty_removed", "faulty_total", "benign_preserved", "benign_total",
          "claim_tp", "claim_fp", "claim_fn", "replayed_original", "original_steps",
          "llm_calls", "tokens"]


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    directory = tmp_path / "cases"
    directory.mkdir()
    for case in generate_cases(42, limit=12):
        (directory / f"{case.task_id}.json").write_text(case.model_dump_json())
    return directory


def test_twelve_generated_cases_all_methods(sample: Path, tmp_path: Path, server_home: Path,
                                           graph_name: str, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PROVREPAIR_HOME", str(server_home))
    monkeypatch.setenv("PROVREPAIR_GRAPH", graph_name)
    monkeypatch.delenv("PROVREPAIR_URI", raising=False)
    out = tmp_path / "results"
    summary, _ = run_benchmark(sample, "all", "offline", None, out)
    lines = [json.loads(t) for t in (out / "results.jsonl").read_text().splitlines() if t]
    assert {line["method"] for line in lines} == set(method_names())
    assert len({line["case"] for line in lines}) == 12
    scored = [line for line in lines if line["status"] != "not_run"]
    assert {line["method"] for line in lines} - {line["method"] for line in scored} == {"llm_judge"}
    for line in scored:
        for count in COUNTS:
            assert isinstance(line[count], (bool, int)), (line["method"], count)
        assert line["original_steps"] > 0 and line["faulty_total"] > 0
    assert (out / "recovery_vs_llm_calls.png").stat().st_size > 0
    assert "dependency_guided" in json.dumps(summary["methods"])
    assert (out / "tables.md").read_text().count("|") > 50
    # the echo sweep against the look-alikes (benchmark/lookalikes.py), exactly recorded:
    # every copy reported (here in the sibling conversation), no benign look-alike
    swept = [line["sweep"] for line in scored if line["method"] == "dependency_guided_echo"]
    assert len(swept) == 12
    kinds: dict[str, dict[str, int]] = {}
    for counts in swept:
        for kind, row in counts.items():
            for name, value in row.items():
                kinds.setdefault(kind, {}).setdefault(name, 0)
                kinds[kind][name] += value
    assert set(kinds) == {"independent", "substring", "namespace_echo", "namespace_independent"}
    assert all(row["records"] >= 12 for row in kinds.values())
    assert kinds["namespace_echo"]["reported"] == kinds["namespace_echo"]["records"]
    for benign in ("independent", "substring", "namespace_independent"):
        assert kinds[benign]["reported"] == 0, benign
    assert kinds["independent"]["value_match"] == kinds["independent"]["records"]
    assert "### The echo sweep by look-alike kind" in (out / "tables.md").read_text()
