"""repair/plan/values.py: how the echo sweep and the benchmark read a value in a text —
normalised (case, Unicode, white space) and bounded (whole tokens, whole numbers)."""

from __future__ import annotations

import pytest

from provrepair.repair.plan.values import same_value, states, without


@pytest.mark.parametrize(("text", "value", "stated"), [
    ("Seat class: Economy", "Seat class: economy", True),
    ("seat\u00a0class:   ＥＣＯＮＯＭＹ", "Seat class: economy", True),   # NBSP, full width
    ("Budget: $5000", "Budget: $500", False),
    ("Budget: $500.", "Budget: $500", True),                   # a full stop ends a sentence
    ("costs $500.50 now", "$500", False),                      # a decimal continues the number
    ("$2,500 total", "2", False),
    ("economyplus", "economy", False),
    ("premium economy", "economy", True),                      # whole token: the text decides
    ("I always fly economy", "economy", True),
    ("anything", "", False),
])
def test_states(text: str, value: str, stated: bool) -> None:
    assert states(text, value) is stated


def test_same_value_and_without() -> None:
    assert same_value("Qantas", " QANTAS ") and not same_value("Qantas", None)
    assert not same_value(500, "$500")
    # a wrong "economy" is not read inside the required "premium economy"
    assert not states(without("Cabin: Premium Economy.", ["premium economy"]), "economy")
    assert states(without("Cabin: economy, not premium economy", ["premium economy"]), "economy")
