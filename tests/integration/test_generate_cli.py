"""`provrepair bench generate`: the full 150 cases, distributed exactly as the paper's
Table 1, written as valid case files plus a manifest, the same bytes for the same seed."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from provrepair.benchmark.generate import MANIFEST, generate_cases, write_cases
from provrepair.benchmark.labels import benign_active, contains_all, final_answer
from provrepair.benchmark.quotas import BINS, MULTI, TABLE1, bin_of
from provrepair.cli import main
from provrepair.provenance.models import Case
from provrepair.provenance.validate import parse_case
from provrepair.provenance.vocab import FaultType, MemoryStatus, StepType

P, S, W, D = "poisoned", "stale", "wrong_user", "summary_drift"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("bench")
    result = CliRunner().invoke(main, ["bench", "generate", "--seed", "42", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, result.output


@pytest.fixture(scope="module")
def cases(generated: tuple[Path, str]) -> list[Case]:
    out, _ = generated
    return [parse_case(json.loads(p.read_text())) for p in sorted(out.glob("*_task_*.json"))]


def faults(case: Case) -> int:
    return sum(1 for m in case.memory_store if m.fault_type is not None)


def test_table_1_exactly(cases: list[Case]) -> None:
    assert len(cases) == 150 and len({c.task_id for c in cases}) == 150
    counts = Counter((c.domain, c.evaluation.primary_fault_type) for c in cases if c.evaluation)
    assert {(d, k): n for d, row in TABLE1.items() for k, n in row.items()} == counts
    assert Counter(c.domain for c in cases) == {"shopping": 48, "travel": 49,
                                                 "customer_support": 53}


def test_fault_multiplicity_and_store_sizes(cases: list[Case]) -> None:
    assert Counter(faults(c) for c in cases) == {1: 128, 2: 17, 3: 5}
    assert Counter(c.domain for c in cases if faults(c) > 1) == MULTI
    sizes = Counter(bin_of(benign_active(c)) for c in cases)
    assert sizes == {name: count for name, _, _, count in BINS}


def test_every_case_is_a_faithful_failed_run(cases: list[Case]) -> None:
    for case in cases:
        ev = case.evaluation
        assert ev is not None
        labelled = {m.memory_id: m.fault_type for m in case.memory_store if m.fault_type}
        assert set(case.diagnosed_faults) == set(labelled) and case.diagnosed_faults
        assert ev.primary_fault_type is ev.fault_manifest[0].fault_type
        assert Counter(labelled.values()) == Counter(e.fault_type for e in ev.fault_manifest)
        assert contains_all(ev.expected_answer, ev.required_facts)
        assert not contains_all(final_answer(case), ev.required_facts)
        assert all(s.derivation is not None for s in case.trace
                   if s.step_type not in (StepType.MEMORY_READ, StepType.TOOL_OBSERVATION))
        ids = {m.memory_id for m in case.memory_store} | {s.step_id for s in case.trace}
        assert set(ev.gold_affected_ids) <= ids and set(ev.benign_memory_ids) <= ids


def test_sessions_have_two_to_four_turns(cases: list[Case]) -> None:
    turns = Counter(len({u.turn for u in c.session}) for c in cases)
    assert set(turns) == {2, 3, 4} and turns[4] > turns[3] > turns[2]
    assert all(len(c.trace) >= 20 for c in cases)


def test_sessions_write_update_delete_and_consolidate(cases: list[Case]) -> None:
    for case in cases:
        kinds = {s.step_type for s in case.trace}
        assert {StepType.MEMORY_WRITE, StepType.MEMORY_UPDATE, StepType.MEMORY_DELETE,
                StepType.TOOL_ACTION, StepType.PLAN} <= kinds
    consolidating = [c for c in cases if any(s.step_type is StepType.MEMORY_CONSOLIDATE
                                             for s in c.trace)]
    assert {c.domain for c in consolidating} == {"shopping", "travel"}
    stale = [m for c in cases for m in c.memory_store if m.fault_type is FaultType.STALE]
    assert stale and all(m.status is MemoryStatus.ACTIVE for m in stale)


def test_manifest_and_printed_table(generated: tuple[Path, str]) -> None:
    out, printed = generated
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["table1"]["shopping"] == {P: 14, S: 10, W: 11, D: 13, "total": 48}
    assert manifest["table1"]["travel"] == {P: 12, S: 12, W: 12, D: 13, "total": 49}
    assert manifest["table1"]["customer_support"] == {P: 16, S: 12, W: 11, D: 14, "total": 53}
    assert (manifest["single_fault"], manifest["multi_fault"]) == (128, 22)
    assert len(manifest["files"]) == 150
    assert "Customer support" in printed and "Single-fault 128, multi-fault 22" in printed


def test_same_seed_same_bytes(generated: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = generated
    sample = generate_cases(42, limit=6)
    write_cases(sample, tmp_path, 42)
    for case in sample:
        name = f"{case.task_id}.json"
        assert (tmp_path / name).read_bytes() == (out / name).read_bytes()


def test_json_summary(tmp_path: Path) -> None:
    """The summary says what was written (a sample: the 150 cases' distribution is checked
    from the module's full generation above)."""
    result = CliRunner().invoke(main, ["bench", "generate", "--seed", "5", "--limit", "12",
                                       "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    written = [parse_case(json.loads(p.read_text())) for p in tmp_path.glob("*_task_*.json")]
    assert summary["cases"] == len(written) == 12 and summary["seed"] == 5
    assert summary["faulty_memories"] == {str(k): n for k, n in
                                          sorted(Counter(faults(c) for c in written).items())}
