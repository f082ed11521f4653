"""The content hash fed piece by piece (provenance/digest.py) is the one-go hash, byte for
byte: stored tasks keep comparing equal to re-ingested identical content."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.digest import (
    CaseDigest,
    canonical_pieces,
    content_hash_of,
    piece_count,
)
from provrepair.provenance.validate import parse_case

ROOT = Path(__file__).resolve().parents[2]
CASE_FILES = sorted([*(ROOT / "examples").glob("*.json"),
                     *(ROOT / "tests" / "cases" / "planner").glob("*_*.json")])


def dumped_cases() -> list[dict[str, Any]]:
    cases = []
    for path in CASE_FILES:
        raw = json.loads(path.read_text(encoding="utf-8"))
        for item in raw if isinstance(raw, list) else [raw]:
            cases.append(parse_case(item).model_dump(mode="json"))
    return cases


ODD = {"b": [], "a": [{"z": "é ✓ \\ \" \n \u0001", "y": [1.5, None, True]}], "c": {"k": []},
       "d": ["x"], "e": 3}


@pytest.mark.parametrize("dumped", [*dumped_cases(), ODD, {}])
def test_pieces_are_the_canonical_json(dumped: dict[str, Any]) -> None:
    pieces = list(canonical_pieces(dumped))
    assert "".join(pieces) == json.dumps(dumped, sort_keys=True, ensure_ascii=False)
    assert len(pieces) == piece_count(dumped)


@pytest.mark.parametrize("share", [1, 2, 7, 10**6])
def test_fed_in_shares_the_hash_is_the_same(share: int) -> None:
    for dumped in [*dumped_cases(), ODD]:
        digest = CaseDigest(dumped)
        for _ in range(3):
            digest.advance(share)
        expected = hashlib.sha256(json.dumps(dumped, sort_keys=True, ensure_ascii=False)
                                  .encode("utf-8")).hexdigest()[:32]
        assert digest.hexdigest() == content_hash_of(dumped) == expected


def test_the_example_cases_exist() -> None:
    assert len(CASE_FILES) > 20
