"""BENCHMARKS.md's generated blocks are its result files (issue 39): every block between
`<!-- quote: PATH -->` and `<!-- end quote -->` is the committed file at PATH, character for
character; a quoted comparisons.md or headline.md is recomputed from the committed
outcomes.json beside it (benchmark/report.py); and the recovery a sweep's tables print
(sweep.json) is the one its outcomes give."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from provrepair.benchmark.report import COMPARISONS, HEADLINE_FILE, OUTCOMES, comparisons_text, headline_text

REPO = Path(__file__).resolve().parents[2]
QUOTE = re.compile(r"<!-- quote: (\S+) -->\n(.*?)<!-- end quote -->", re.S)


def quotes() -> list[tuple[str, str]]:
    return QUOTE.findall((REPO / "BENCHMARKS.md").read_text(encoding="utf-8"))


def test_benchmarks_quotes_its_result_files() -> None:
    found = quotes()
    assert any(path.endswith(HEADLINE_FILE) for path, _ in found)
    assert any(path.endswith(COMPARISONS) for path, _ in found)
    for path, text in found:
        assert text == (REPO / path).read_text(encoding="utf-8"), path


@pytest.mark.parametrize("path", sorted({p for p, _ in quotes()
                                          if p.endswith((COMPARISONS, HEADLINE_FILE))}))
def test_quoted_comparisons_are_recomputed_from_the_outcomes(path: str) -> None:
    outcomes = json.loads((REPO / path).with_name(OUTCOMES).read_text(encoding="utf-8"))
    make = comparisons_text if path.endswith(COMPARISONS) else headline_text
    assert (REPO / path).read_text(encoding="utf-8") == make(outcomes)


def test_the_sweeps_recovery_is_its_outcomes() -> None:
    for path in {p for p, _ in quotes() if p.endswith(COMPARISONS)}:
        folder = (REPO / path).parent
        outcomes = json.loads((folder / OUTCOMES).read_text(encoding="utf-8"))["settings"]
        sweep = json.loads((folder / "sweep.json").read_text(encoding="utf-8"))
        for method, by_rate in sweep["methods"].items():
            for rate, by_level in by_rate.items():
                for level, stats in by_level.items():
                    seeds = outcomes[f"noise {float(rate):g} @{level}"]
                    rates = [seeds[s]["methods"][method]["recovered"].count("1")
                             / len(seeds[s]["cases"]) for s in sorted(seeds, key=int)
                             if method in seeds[s]["methods"]]
                    if rates:
                        assert stats["recovery"]["mean"] == pytest.approx(statistics.fmean(rates))
