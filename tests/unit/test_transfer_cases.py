"""The committed transfer set (benchmark/transfer/cases): every case valid and scorable, shaped
as the paper's §4.4 subset, its source and license named; the builder reproduces a committed
case byte for byte from its source line (tests/cases/transfer: one line of τ²-bench's
published retail simulations with the fields the builder reads — its judge's fields and the
author's local file path left out —, MIT, its LICENSE beside it), and `bench generate --set
transfer` (caseset.py) reproduces committed cases from the committed source lines; the
source reader and the poisoning on their own."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from provrepair.benchmark import generate, transfer
from provrepair.benchmark.cases import BenchCase, load_cases
from provrepair.benchmark.generate import dumps
from provrepair.benchmark.labels import contains_all, final_answer
from provrepair.benchmark.lookalikes import labelled
from provrepair.benchmark.sweep import Wanted
from provrepair.benchmark.transfer.build import (
    CASES_DIR,
    MULTIPLICITY,
    SOURCE_FILE,
    Settings,
    build_one,
    build_transfer,
    case_id,
    committed_counts,
    fault_counts,
    read_manifest,
    selected,
    source_rows,
)
from provrepair.benchmark.transfer.poison import retail_corruptions
from provrepair.benchmark.transfer.session import NotUsable, map_trajectory
from provrepair.benchmark.transfer.tau2 import SOURCE, read_rows, trajectory
from provrepair.provenance.errors import InputError
from provrepair.provenance.vocab import FaultType, StepType

Committed = tuple[list[BenchCase], dict[str, Any]]
FIXTURE = Path(__file__).resolve().parents[1] / "cases" / "transfer" / "tau2_retail_task_2.jsonl"


@pytest.fixture(scope="module")
def committed() -> Committed:
    cases, notes = load_cases(CASES_DIR)   # the strict reader and validation `ingest` uses
    assert notes == []
    return cases, read_manifest()


def test_committed_cases_validate_and_are_the_papers_shape(committed: Committed) -> None:
    cases, manifest = committed
    assert len(cases) == manifest["cases"] == 50
    assert manifest["fault_multiplicity"] == {str(k): n for k, n in MULTIPLICITY.items()}
    faults = {o["case"]: o["faults"] for o in manifest["origins"]}
    for item in cases:
        case, evaluation = item.case, item.case.evaluation
        assert evaluation is not None and evaluation.required_facts
        assert len(case.diagnosed_faults) == faults[case.task_id]
        store = {m.memory_id: m for m in case.memory_store}
        assert {store[f].fault_type for f in case.diagnosed_faults} == {FaultType.POISONED}
        # every poisoned note is read by a later step: its wrong value is in that step's
        # output (a citation may be one the recording dropped: fidelity 0.8)
        for entry in evaluation.fault_manifest:
            extra = entry.model_extra or {}
            producer = next(s for s in case.trace if s.step_id == extra["producer_step"])
            assert any(str(extra["corrupted_value"]) in s.content for s in case.trace
                       if s.timestamp > producer.timestamp and s.step_type is not StepType.MEMORY_WRITE), \
                (case.task_id, extra["faulty_id"])
        assert not contains_all(final_answer(case), evaluation.required_facts)   # a failure
        claims = {s.step_id for s in case.trace if s.step_type is StepType.CLAIM}
        assert set(evaluation.gold_affected_claim_ids) <= claims
        assert set(evaluation.benign_memory_ids) <= set(store) - set(case.diagnosed_faults)


def test_the_source_and_its_license_are_named(committed: Committed) -> None:
    _, manifest = committed
    assert manifest["source"] | {"rows": None} == {
        "repository": SOURCE.repository, "commit": SOURCE.commit, "path": SOURCE.path,
        "license": "MIT", "rows": None}
    assert (CASES_DIR / "LICENSE").read_text().startswith("MIT License\n\nCopyright (c) 2025 Sierra Research")
    origin = next(o for o in manifest["origins"] if o["case"] == "tau2_retail_002")
    assert origin["tau2_task_id"] == "2" and origin["first_action"] == {
        "tool": "return_delivered_order_items", "message": 27}


def test_the_builder_reproduces_a_committed_case_from_its_source_line(
        committed: Committed) -> None:
    _, manifest = committed
    (traj,) = [trajectory(row) for row in read_rows(FIXTURE)]
    faults = next(o["faults"] for o in manifest["origins"] if o["case"] == case_id(traj))
    settings = Settings(manifest["seed"], manifest["fidelity"], manifest["answerable_share"])
    case = build_one(traj, map_trajectory(traj), faults, settings)
    assert dumps(case.model_dump(mode="json")) == \
        (CASES_DIR / f"{case.task_id}.json").read_text(encoding="utf-8")
    # the same line through the whole pipeline (selection, fault count of a one-case set)
    built, summary = build_transfer(read_rows(FIXTURE), settings)
    assert [c.task_id for c in built] == ["tau2_retail_002"] and summary["cases"] == 1


def test_the_committed_source_lines_are_the_selection_and_hold_the_fixture() -> None:
    """cases/source.jsonl holds the 50 selected lines, each with the fields the builder reads:
    selecting from it selects them all again; the fixture is one of them."""
    source = read_rows(SOURCE_FILE)
    assert len(source) == 50 and source_rows(source) == source
    assert [case_id(t) for t, _ in selected(source)] == \
        sorted(committed_counts(read_manifest()))
    (fixture,) = read_rows(FIXTURE)
    assert fixture in source


def test_generate_set_transfer_writes_committed_cases_from_the_source_lines(
        tmp_path: Path) -> None:
    """At the committed settings a sample is the committed cases byte for byte (each with
    its copies and benign look-alikes), its manifest one a sweep reuses; another seed
    poisons the same trajectories otherwise."""
    summary = transfer.generate_benchmark(42, tmp_path / "s42", limit=3, fidelity=0.8,
                                          answerable=0.5)
    names = sorted(p.name for p in (tmp_path / "s42").glob("tau2_retail_*.json"))
    assert len(names) == summary["cases"] == 3
    for name in names:
        assert (tmp_path / "s42" / name).read_bytes() == (CASES_DIR / name).read_bytes(), name
    assert committed_counts(summary) == {k: v for k, v in committed_counts(read_manifest()).items()
                                         if f"{k}.json" in names}
    cases, _ = load_cases(tmp_path / "s42")
    kinds = {kind for item in cases for kind in labelled(item.case).values()}
    assert {"independent", "substring", "namespace_echo", "namespace_independent"} <= kinds
    manifest = json.loads((tmp_path / "s42" / "manifest.json").read_text())
    assert (manifest["case_set"], manifest["seed"], manifest["cases"]) == ("transfer", 42, 3)
    assert Wanted(42, 0.8, 3, 0.5, transfer).matches(manifest)
    assert not Wanted(42, 0.8, 3, 0.5, generate).matches(manifest)   # not a controlled sample
    other = transfer.generate_benchmark(7, tmp_path / "s7", limit=3)
    assert other["seed"] == 7 and other["fidelity"] == 0.8 and other["answerable_share"] == 0.5
    assert any((tmp_path / "s7" / n).read_bytes() != (CASES_DIR / n).read_bytes()
               for n in (p.name for p in (tmp_path / "s7").glob("tau2_retail_*.json"))
               if (CASES_DIR / n).exists())


def test_the_reader_pairs_calls_with_results_and_keeps_lists_inside_messages() -> None:
    traj = trajectory(read_rows(FIXTURE)[0])
    assert [m.index for m in traj.messages] == list(range(1, len(traj.messages) + 1))
    assert len(traj.messages) == 30   # message 25 holds a numbered list "1. **Color:** ..."
    calls = traj.calls
    assert [c.tool for c in calls[:3]] == ["find_user_id_by_name_zip", "list_all_product_types",
                                           "get_user_details"]
    # two calls in a row, then their results in call order
    assert (calls[1].result_index, calls[2].result_index) == (10, 11)
    assert calls[2].parsed()["user_id"] == "yusuf_rossi_9620"
    assert [c.reads for c in calls].index(False) == 9   # the return, the first action


def test_a_line_without_a_transcript_is_an_input_error() -> None:
    with pytest.raises(InputError, match="task '7': no conversation transcript"):
        trajectory({"task_id": "7", "prompt": "Domain: retail"})
    broken = "Conversation transcript:\n1. Assistant TOOL CALL -> get_x {'a': \n\nJudging instructions:"
    with pytest.raises(InputError, match="task '8', message 1: tool call arguments are not a dict"):
        trajectory({"task_id": "8", "prompt": broken})


def test_a_trajectory_with_too_few_facts_is_not_used() -> None:
    row = read_rows(FIXTURE)[0]
    head = row["prompt"].split("\n6. Tool ")[0]   # the lookup is never answered
    cut = {**row, "prompt": head + "\n\nJudging instructions:\n"}
    with pytest.raises(NotUsable, match="needs 0 noted facts"):
        map_trajectory(trajectory(cut))
    assert selected([cut]) == []


def test_fault_counts_follow_the_papers_multiplicity() -> None:
    """50 trajectories (one source line under 50 task ids, one with fewer asked facts): 5
    cases with one poisoned record, 5 with two, 38 with three, 2 with four, the fours to the
    trajectories with the most asked facts; 10 of them: the same shares, scaled down."""
    ((traj, mapped),) = selected(read_rows(FIXTURE))
    chosen = [(replace(traj, task_id=str(n)), mapped) for n in range(1, 51)]
    small = replace(mapped, question=replace(mapped.question, asked=mapped.question.asked[:3]))
    chosen[0] = (chosen[0][0], small)
    counts = fault_counts(chosen, 42)
    assert Counter(counts.values()) == Counter(MULTIPLICITY)
    assert [c for c, k in counts.items() if k == 4] == ["tau2_retail_002", "tau2_retail_003"]
    assert counts == fault_counts(chosen, 42) != fault_counts(chosen, 7)
    assert Counter(fault_counts(chosen[:10], 42).values()) == {1: 1, 2: 1, 3: 8}


@pytest.mark.parametrize("value, shape", [
    ("$1,819.92", r"^\$[\d,]+\.\d\d$"), ("delivered", r"^(pending|processed|cancelled)$"),
    ("mastercard ending 2478", r"^(visa|amex|discover) ending 2478$"),
    ("19122", r"^\d{5}$")])
def test_wrong_values_keep_the_shape_and_differ(value: str, shape: str) -> None:
    wrong = retail_corruptions(value, random.Random(1))
    assert wrong and all(w != value and re.match(shape, w) for w in wrong), wrong


def test_a_value_without_a_shape_is_not_corrupted() -> None:
    assert retail_corruptions("no digits here", random.Random(1)) == []


def test_manifest_is_json_the_case_loader_skips() -> None:
    raw = json.loads((CASES_DIR / "manifest.json").read_text())
    assert raw["case_set"] == "transfer" and "format" not in raw
