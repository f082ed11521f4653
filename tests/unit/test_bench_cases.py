"""The benchmark reads its case folders with the product's strict reader: a damaged folder is
one line naming file and line (exit 2 from the CLI), never a silently smaller benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provrepair.benchmark.cases import load_cases
from provrepair.provenance.errors import UserError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shopping_poisoned_price.json"


def folder_with(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / "good.json").write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "manifest.json").write_text(json.dumps({"cases": 1}), encoding="utf-8")
    (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_a_clean_folder_reads_its_cases_and_skips_the_manifest(tmp_path: Path) -> None:
    cases, notes = load_cases(folder_with(tmp_path, "empty.jsonl", ""))
    assert [c.task_id for c in cases] == ["shopping_task_014"] and notes == []


@pytest.mark.parametrize("name, text, says", [
    ("dup.json", '{"format": "provrepair.case/1", "format": "provrepair.case/1"}', "duplicate"),
    ("cut.json", EXAMPLE.read_text(encoding="utf-8")[:500], "cut.json"),
    ("bad.jsonl", '{"note": 1}\n{not json\n', "bad.jsonl:2"),
    ("nan.json", '{"format": "provrepair.case/1", "x": NaN}', "nan.json"),
])
def test_a_damaged_file_is_one_error_naming_it(tmp_path: Path, name: str, text: str,
                                               says: str) -> None:
    with pytest.raises(UserError) as caught:
        load_cases(folder_with(tmp_path, name, text))
    assert says in str(caught.value) and "\n" not in str(caught.value).strip()
