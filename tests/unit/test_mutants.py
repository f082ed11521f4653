"""bench/mutants.json (the planted bugs of bench/property.py) stays in step with the planner:
each mutant's text occurs exactly once in its file, so `bench/property.py mutants` plants
every bug it lists and the bug changes the code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MUTANTS = json.loads((REPO / "bench" / "mutants.json").read_text())["mutants"]


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m["name"] for m in MUTANTS])
def test_mutant_applies_once_and_changes_the_code(mutant: dict[str, str]) -> None:
    text = (REPO / mutant["file"]).read_text()
    assert text.count(mutant["find"]) == 1, f"update bench/mutants.json for {mutant['file']}"
    assert mutant["replace"] != mutant["find"]
