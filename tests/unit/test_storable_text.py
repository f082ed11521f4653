"""check_storable_text's one-pass fast path never lets through what the located walk refuses."""

from __future__ import annotations

import random
from collections import OrderedDict
from typing import Any

import pytest

from provrepair.provenance.errors import CaseError
from provrepair.provenance.parsing import MAX_DEPTH, _strings, check_storable_text

BAD = ["nul\x00here", "lone \ud800 surrogate", "\udfff", "\x00"]
GOOD = ["", "plain", "ünï 🧪", "new\nline", "\\u0000 as text"]


def located_walk_refuses(raw: Any) -> bool:
    """The slow walk alone (the behaviour before the fast path)."""
    for loc, text in _strings(raw, ()):
        if len(loc) > MAX_DEPTH or "\x00" in text:
            return True
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return True
    return False


def random_data(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        pool = GOOD * 8 + BAD if rng.random() < 0.5 else [1, 2.5, True, None]
        return rng.choice(pool)
    if roll < 0.7:
        return [random_data(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = [rng.choice(GOOD * 8 + BAD) + str(i) for i in range(rng.randint(0, 3))]
    return {k: random_data(rng, depth + 1) for k in keys}


def nested(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    return value


CASES = [random_data(random.Random(seed)) for seed in range(300)] + [
    nested(MAX_DEPTH), nested(MAX_DEPTH + 1), nested(MAX_DEPTH - 1), [nested(MAX_DEPTH)],
    {"a": nested(MAX_DEPTH - 1)}, {"a": nested(MAX_DEPTH)}, nested(MAX_DEPTH)[0:0],
    OrderedDict(x="nul\x00"), ("tuple", "nul\x00"), {"ok": OrderedDict(y="fine")},
]


@pytest.mark.parametrize("raw", CASES)
def test_fast_path_agrees_with_the_located_walk(raw: Any) -> None:
    refused = located_walk_refuses(raw)
    try:
        check_storable_text(raw, "t")
    except CaseError:
        assert refused
    else:
        assert not refused


def test_the_refusal_still_names_the_field() -> None:
    with pytest.raises(CaseError, match=r"trace\[1\]\.content"):
        check_storable_text({"trace": [{"content": "ok"}, {"content": "a\x00b"}]}, "t")
