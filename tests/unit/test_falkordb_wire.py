"""The FalkorDB adapter's own wire code against the `falkordb` client's rules."""

from __future__ import annotations

import random
from typing import Any

import pytest
from falkordb.helpers import stringify_param_value
from redis.exceptions import ResponseError

from provrepair.provenance.store.falkordb_wire import check_reply, param_text, rows

ODD_TEXT = ['', 'plain', 'quote " inside', 'back\\slash', '\\"', 'new\nline\ttab', 'ünï 🧪',
            '`tick`', "apos'trophe", '$param', '}]) RETURN 1 //']


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kinds = ["str", "int", "float", "bool", "none"] + (["list", "dict"] if depth < 3 else [])
    kind = rng.choice(kinds)
    if kind == "str":
        return rng.choice(ODD_TEXT) + str(rng.randint(0, 9))
    if kind == "int":
        return rng.randint(-2**63, 2**63 - 1)
    if kind == "float":
        return rng.uniform(-1e6, 1e6)
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "none":
        return None
    if kind == "list":
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {f"k{i}_{rng.randint(0, 99)}": random_value(rng, depth + 1)
            for i in range(rng.randint(0, 4))}


@pytest.mark.parametrize("seed", range(200))
def test_param_text_is_what_the_client_sends(seed: int) -> None:
    value = random_value(random.Random(seed))
    assert param_text(value) == stringify_param_value(value)


@pytest.mark.parametrize("text", ODD_TEXT)
def test_strings_escape_only_backslash_and_quote(text: str) -> None:
    assert param_text(text) == stringify_param_value(text)
    assert param_text({"rows": [{"uid": text}]}) == stringify_param_value({"rows": [{"uid": text}]})


@pytest.mark.parametrize("key", ["", "a`b"])
def test_map_keys_the_client_refuses_are_refused(key: str) -> None:
    with pytest.raises(ValueError):
        param_text({key: 1})


def test_compact_reply_decodes_scalars_lists_and_maps() -> None:
    reply = [[[1, "s"], [1, "n"], [1, "b"], [1, "f"], [1, "none"], [1, "list"], [1, "map"]],
             [[[2, "x"], [3, 7], [4, "true"], [5, "0.5"], [1, None],
               [6, [[2, "a"], [3, 1], [6, [[4, "false"]]]]],
               [10, ["k", [2, "v"], "n", [1, None]]]]],
             ["Query internal execution time: 0.1 milliseconds"]]
    assert rows(None, reply) == [{"s": "x", "n": 7, "b": True, "f": 0.5, "none": None,
                                  "list": ["a", 1, [False]], "map": {"k": "v", "n": None}}]


def test_a_reply_without_result_set_has_no_rows() -> None:
    assert rows(None, [["Nodes created: 1"]]) == []


@pytest.mark.parametrize("reply", [ResponseError("boom"), [ResponseError("boom")],
                                   [[], [], ResponseError("boom")]])
def test_errors_in_a_reply_are_raised(reply: Any) -> None:
    with pytest.raises(ResponseError, match="boom"):
        check_reply(reply)
