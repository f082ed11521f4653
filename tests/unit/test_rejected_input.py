"""The 'Rejected input' rules of docs/case-format.md, one mutation of the example case at a time.

Every rejection must be a `CaseError` naming the task, the field (as `provenance.validate`
spells it: `trace[3].used_ids`, `memory_store[1].supersedes`, ...) and the offending id.
Also: the valid example and valid-but-hostile ids pass, and `derive_edges` follows the
spec's edge table.

Example layout (indices used below):
    session       0 u_1 (turn 1)   1 u_2 (turn 2)
    memory_store  0 m_001  1 m_004  2 m_005  3 m_006  4 m_f003
    trace         0 s_001  1 s_002  2 s_003  3 s_004  4 s_005            (turn 1)
                  5 s_007  6 s_008  7 s_009  8 s_010  9 s_011  10 s_012 (turn 2)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.edges import Edge, derive_edges
from provrepair.provenance.errors import CaseError, UserError
from provrepair.provenance.validate import parse_case, require_faults
from provrepair.provenance.vocab import EdgeLabel

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shopping_poisoned_price.json"
BASE: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
TID = "shopping_task_014"
CYCLE_FIELD = "trace.prev_step_ids/next_step_ids"
LONE_SURROGATE = json.loads('"\\ud800"')

Mutation = Callable[[dict[str, Any]], None]


def fresh() -> dict[str, Any]:
    return copy.deepcopy(BASE)


def _at(case: dict[str, Any], path: tuple[Any, ...]) -> Any:
    node: Any = case
    for part in path:
        node = node[part]
    return node


def put(*path: Any, value: Any) -> Mutation:
    def mutate(case: dict[str, Any]) -> None:
        _at(case, path[:-1])[path[-1]] = value
    return mutate


def drop(*path: Any) -> Mutation:
    def mutate(case: dict[str, Any]) -> None:
        del _at(case, path[:-1])[path[-1]]
    return mutate


def add(*path: Any, value: Any) -> Mutation:
    def mutate(case: dict[str, Any]) -> None:
        _at(case, path).append(value)
    return mutate


def rejected(mutate: Mutation) -> CaseError:
    case = fresh()
    mutate(case)
    with pytest.raises(CaseError) as info:
        parse_case(case)
    return info.value


def assert_names(err: CaseError, task: str | None, field: str, offending: str | None) -> None:
    assert (err.task_id, err.field, err.offending_id) == (task, field, offending), str(err)
    text = str(err)
    if task is not None:
        assert repr(task) in text
    assert field in text
    if offending is not None:
        assert repr(offending) in text
    assert isinstance(err, UserError)


# (mutation, expected field, expected offending id); the task is always TID.
REJECTED = [
    # -- unknown / missing format ----------------------------------------------------------
    pytest.param(put("format", value="provrepair.case/2"), "format", None, id="format-unknown"),
    pytest.param(put("format", value=1), "format", None, id="format-not-a-string"),
    pytest.param(drop("format"), "format", None, id="format-missing"),
    # -- missing required fields ------------------------------------------------------------
    pytest.param(drop("domain"), "domain", None, id="missing-top-domain"),
    pytest.param(drop("session"), "session", None, id="missing-top-session"),
    pytest.param(drop("memory_store"), "memory_store", None, id="missing-top-memory_store"),
    pytest.param(drop("trace"), "trace", None, id="missing-top-trace"),
    pytest.param(drop("diagnosed_faults"), "diagnosed_faults", None,
                 id="missing-top-diagnosed_faults"),
    pytest.param(drop("session", 0, "turn"), "session[0].turn", "u_1", id="missing-input-turn"),
    pytest.param(drop("session", 1, "content"), "session[1].content", "u_2",
                 id="missing-input-content"),
    pytest.param(drop("session", 1, "timestamp"), "session[1].timestamp", "u_2",
                 id="missing-input-timestamp"),
    pytest.param(drop("memory_store", 0, "supersedes"), "memory_store[0].supersedes", "m_001",
                 id="missing-memory-supersedes-nullable"),
    pytest.param(drop("memory_store", 1, "last_modified_by"),
                 "memory_store[1].last_modified_by", "m_004",
                 id="missing-memory-last_modified_by-nullable"),
    pytest.param(drop("memory_store", 2, "created_at"), "memory_store[2].created_at", "m_005",
                 id="missing-memory-created_at"),
    pytest.param(drop("memory_store", 3, "derived_from"), "memory_store[3].derived_from",
                 "m_006", id="missing-memory-derived_from"),
    pytest.param(drop("memory_store", 3, "status"), "memory_store[3].status", "m_006",
                 id="missing-memory-status"),
    pytest.param(drop("trace", 0, "turn"), "trace[0].turn", "s_001", id="missing-step-turn"),
    pytest.param(drop("trace", 3, "prev_step_ids"), "trace[3].prev_step_ids", "s_004",
                 id="missing-step-prev_step_ids"),
    pytest.param(drop("trace", 3, "used_ids"), "trace[3].used_ids", "s_004",
                 id="missing-step-used_ids"),
    pytest.param(drop("trace", 6, "timestamp"), "trace[6].timestamp", "s_008",
                 id="missing-step-timestamp"),
    pytest.param(drop("trace", 2, "step_id"), "trace[2].step_id", None, id="missing-step-id"),
    # -- wrong types ------------------------------------------------------------------------
    pytest.param(put("trace", 0, "timestamp", value=101.0), "trace[0].timestamp", "s_001",
                 id="float-step-timestamp"),
    pytest.param(put("trace", 0, "timestamp", value=101.5), "trace[0].timestamp", "s_001",
                 id="fractional-step-timestamp"),
    pytest.param(put("trace", 0, "timestamp", value=True), "trace[0].timestamp", "s_001",
                 id="bool-step-timestamp"),
    pytest.param(put("session", 0, "timestamp", value=False), "session[0].timestamp", "u_1",
                 id="bool-input-timestamp"),
    pytest.param(put("memory_store", 0, "created_at", value=101.0),
                 "memory_store[0].created_at", "m_001", id="float-memory-created_at"),
    pytest.param(put("memory_store", 0, "last_modified_at", value="101"),
                 "memory_store[0].last_modified_at", "m_001", id="string-memory-timestamp"),
    pytest.param(put("trace", 5, "turn", value="2"), "trace[5].turn", "s_007",
                 id="string-step-turn"),
    pytest.param(put("session", 0, "turn", value=1.0), "session[0].turn", "u_1",
                 id="float-input-turn"),
    pytest.param(put("trace", 0, "turn", value=0), "trace[0].turn", "s_001", id="turn-zero"),
    pytest.param(put("trace", 3, "used_ids", value=[3]), "trace[3].used_ids[0]", "s_004",
                 id="int-in-used_ids"),
    pytest.param(put("trace", 0, "step_id", value=7), "trace[0].step_id", None,
                 id="int-step_id"),
    pytest.param(put("memory_store", 1, "supersedes", value=5), "memory_store[1].supersedes",
                 "m_004", id="int-supersedes"),
    pytest.param(put("diagnosed_faults", value=[3]), "diagnosed_faults[0]", None,
                 id="int-in-diagnosed_faults"),
    pytest.param(put("trace", 1, "used_ids", value="s_001"), "trace[1].used_ids", "s_002",
                 id="non-list-used_ids"),
    pytest.param(put("memory_store", 3, "derived_from", value="m_001"),
                 "memory_store[3].derived_from", "m_006", id="non-list-derived_from"),
    pytest.param(put("trace", 0, "timestamp", value=2**63), "trace[0].timestamp", "s_001",
                 id="timestamp-above-int64"),
    pytest.param(put("memory_store", 1, "created_at", value=-(2**63) - 1),
                 "memory_store[1].created_at", "m_004", id="timestamp-below-int64"),
    pytest.param(put("trace", 0, "extra_field", value=1), "trace[0].extra_field", "s_001",
                 id="unknown-step-field"),
    # -- unknown vocabulary -----------------------------------------------------------------
    pytest.param(put("trace", 2, "step_type", value="thought"), "trace[2].step_type", "s_003",
                 id="unknown-step_type"),
    pytest.param(put("memory_store", 1, "status", value="archived"),
                 "memory_store[1].status", "m_004", id="unknown-memory-status"),
    pytest.param(put("memory_store", 1, "source", value="rumor"), "memory_store[1].source",
                 "m_004", id="unknown-memory-source"),
    pytest.param(put("trace", 3, "status", value="maybe"), "trace[3].status", "s_004",
                 id="unknown-step-status"),
    # -- duplicate ids (one namespace per task) --------------------------------------------
    pytest.param(put("trace", 1, "step_id", value="s_001"), "trace[1].step_id", "s_001",
                 id="duplicate-two-steps"),
    pytest.param(put("memory_store", 2, "memory_id", value="s_001"), "trace[0].step_id",
                 "s_001", id="duplicate-step-and-memory"),
    pytest.param(put("memory_store", 2, "memory_id", value="m_004"),
                 "memory_store[2].memory_id", "m_004", id="duplicate-two-memories"),
    pytest.param(put("memory_store", 1, "memory_id", value="u_1"),
                 "memory_store[1].memory_id", "u_1", id="duplicate-input-and-memory"),
    pytest.param(put("session", 1, "input_id", value="u_1"), "session[1].input_id", "u_1",
                 id="duplicate-two-inputs"),
    # -- ids that name nothing --------------------------------------------------------------
    pytest.param(add("trace", 3, "used_ids", value="ghost"), "trace[3].used_ids", "ghost",
                 id="dangling-used_ids"),
    pytest.param(add("trace", 3, "prev_step_ids", value="ghost"), "trace[3].prev_step_ids",
                 "ghost", id="dangling-prev_step_ids"),
    pytest.param(add("trace", 3, "next_step_ids", value="ghost"), "trace[3].next_step_ids",
                 "ghost", id="dangling-next_step_ids"),
    pytest.param(add("trace", 0, "generated_memory_ids", value="ghost"),
                 "trace[0].generated_memory_ids", "ghost", id="dangling-generated_memory_ids"),
    pytest.param(add("trace", 4, "invalidated_memory_ids", value="ghost"),
                 "trace[4].invalidated_memory_ids", "ghost",
                 id="dangling-invalidated_memory_ids"),
    pytest.param(put("memory_store", 1, "derived_from", value=["ghost"]),
                 "memory_store[1].derived_from", "ghost", id="dangling-derived_from"),
    pytest.param(put("memory_store", 1, "supersedes", value="ghost"),
                 "memory_store[1].supersedes", "ghost", id="dangling-supersedes"),
    pytest.param(put("memory_store", 1, "last_modified_by", value="ghost"),
                 "memory_store[1].last_modified_by", "ghost", id="dangling-last_modified_by"),
    pytest.param(put("diagnosed_faults", value=["m_f003", "ghost"]), "diagnosed_faults",
                 "ghost", id="dangling-diagnosed_faults"),
    pytest.param(put("trace", 3, "used_ids", value=["S_003"]), "trace[3].used_ids", "S_003",
                 id="dangling-case-differs"),
    pytest.param(put("trace", 3, "used_ids", value=["s_003 "]), "trace[3].used_ids", "s_003 ",
                 id="dangling-trailing-space"),
    # -- ids that name the wrong kind -------------------------------------------------------
    pytest.param(add("trace", 3, "prev_step_ids", value="m_001"), "trace[3].prev_step_ids",
                 "m_001", id="kind-memory-in-prev_step_ids"),
    pytest.param(add("trace", 3, "prev_step_ids", value="u_1"), "trace[3].prev_step_ids",
                 "u_1", id="kind-input-in-prev_step_ids"),
    pytest.param(add("trace", 3, "next_step_ids", value="m_004"), "trace[3].next_step_ids",
                 "m_004", id="kind-memory-in-next_step_ids"),
    pytest.param(add("trace", 0, "generated_memory_ids", value="s_002"),
                 "trace[0].generated_memory_ids", "s_002",
                 id="kind-step-in-generated_memory_ids"),
    pytest.param(add("trace", 0, "generated_memory_ids", value="s_001"),
                 "trace[0].generated_memory_ids", "s_001",
                 id="kind-own-step-in-generated_memory_ids"),
    pytest.param(add("trace", 0, "generated_memory_ids", value="u_1"),
                 "trace[0].generated_memory_ids", "u_1",
                 id="kind-input-in-generated_memory_ids"),
    pytest.param(add("trace", 4, "invalidated_memory_ids", value="s_001"),
                 "trace[4].invalidated_memory_ids", "s_001",
                 id="kind-step-in-invalidated_memory_ids"),
    pytest.param(put("memory_store", 1, "derived_from", value=["s_001"]),
                 "memory_store[1].derived_from", "s_001", id="kind-step-in-derived_from"),
    pytest.param(put("memory_store", 1, "derived_from", value=["u_1"]),
                 "memory_store[1].derived_from", "u_1", id="kind-input-in-derived_from"),
    pytest.param(put("memory_store", 1, "supersedes", value="s_002"),
                 "memory_store[1].supersedes", "s_002", id="kind-step-in-supersedes"),
    pytest.param(put("memory_store", 1, "supersedes", value="u_2"),
                 "memory_store[1].supersedes", "u_2", id="kind-input-in-supersedes"),
    pytest.param(put("memory_store", 1, "last_modified_by", value="m_001"),
                 "memory_store[1].last_modified_by", "m_001",
                 id="kind-memory-in-last_modified_by"),
    pytest.param(put("memory_store", 1, "last_modified_by", value="m_004"),
                 "memory_store[1].last_modified_by", "m_004",
                 id="kind-own-memory-in-last_modified_by"),
    pytest.param(put("diagnosed_faults", value=["s_008"]), "diagnosed_faults", "s_008",
                 id="kind-step-in-diagnosed_faults"),
    pytest.param(put("diagnosed_faults", value=["u_1"]), "diagnosed_faults", "u_1",
                 id="kind-input-in-diagnosed_faults"),
    # -- subsets ----------------------------------------------------------------------------
    pytest.param(put("trace", 2, "sufficient_ids", value=["s_001"]), "trace[2].sufficient_ids",
                 "s_001", id="sufficient_ids-not-subset"),
    pytest.param(add("trace", 1, "sufficient_ids", value="ghost"), "trace[1].sufficient_ids",
                 "ghost", id="sufficient_ids-dangling-not-subset"),
    pytest.param(put("memory_store", 1, "sufficient_from", value=["m_001"]),
                 "memory_store[1].sufficient_from", "m_001",
                 id="sufficient_from-not-subset-of-empty"),
    # -- records of another task ------------------------------------------------------------
    pytest.param(put("session", 1, "task_id", value="other_task"), "session[1].task_id", "u_2",
                 id="foreign-task-input"),
    pytest.param(put("memory_store", 1, "task_id", value="other_task"),
                 "memory_store[1].task_id", "m_004", id="foreign-task-memory"),
    pytest.param(put("trace", 3, "task_id", value=TID + " "), "trace[3].task_id", "s_004",
                 id="foreign-task-step-trailing-space"),
]


@pytest.mark.parametrize(("mutate", "field", "offending"), REJECTED)
def test_rejected(mutate: Mutation, field: str, offending: str | None) -> None:
    assert_names(rejected(mutate), TID, field, offending)


def test_sufficient_from_not_subset_of_nonempty_derived_from() -> None:
    def mutate(case: dict[str, Any]) -> None:
        case["memory_store"][3]["derived_from"] = ["m_004", "m_005"]
        case["memory_store"][3]["sufficient_from"] = ["m_005", "m_001"]
    assert_names(rejected(mutate), TID, "memory_store[3].sufficient_from", "m_001")


# -- CHAIN cycles (the batch path checks the whole trace once, Kahn's algorithm) ----------

@pytest.mark.parametrize(("mutate", "offending", "members"), [
    pytest.param(add("trace", 8, "prev_step_ids", value="s_011"), "s_010", ["s_010", "s_011"],
                 id="2-cycle-via-prev"),
    pytest.param(add("trace", 10, "next_step_ids", value="s_011"), "s_011",
                 ["s_011", "s_012"], id="2-cycle-via-next"),
    pytest.param(put("trace", 10, "next_step_ids", value=["s_010"]), "s_010",
                 ["s_010", "s_011", "s_012"], id="3-cycle"),
    pytest.param(add("trace", 4, "next_step_ids", value="s_005"), "s_005", ["s_005"],
                 id="self-loop"),
])
def test_chain_cycle(mutate: Mutation, offending: str, members: list[str]) -> None:
    err = rejected(mutate)
    assert_names(err, TID, CYCLE_FIELD, offending)
    assert "CHAIN cycle" in str(err)
    for sid in members:
        assert repr(sid) in str(err)


def _cycle_with_tail(case: dict[str, Any]) -> None:
    """s_011 <-> s_012 is a cycle; 'a_tail' (the smallest id) hangs after it, not on it."""
    case["trace"][10]["next_step_ids"] = ["s_011", "a_tail"]
    tail = copy.deepcopy(case["trace"][10])
    tail.update(step_id="a_tail", prev_step_ids=["s_012"], next_step_ids=[], used_ids=[],
                sufficient_ids=[], timestamp=207)
    tail.pop("derivation", None)
    case["trace"].append(tail)


def test_chain_cycle_with_a_tail_sorting_after_it() -> None:
    """A tail whose id sorts after the cycle's ids: the cycle is found and named."""
    def mutate(case: dict[str, Any]) -> None:
        _cycle_with_tail(case)
        case["trace"][10]["next_step_ids"] = ["s_011", "z_tail"]
        case["trace"][11]["step_id"] = "z_tail"
    err = rejected(mutate)
    assert_names(err, TID, CYCLE_FIELD, "s_011")
    assert "z_tail" not in str(err)


def test_chain_cycle_is_rejected_even_with_a_tail() -> None:
    err = rejected(_cycle_with_tail)
    assert (err.task_id, err.field) == (TID, CYCLE_FIELD)


def test_chain_cycle_names_a_step_on_the_cycle() -> None:
    """The smallest leftover id ('a_tail') is downstream of the cycle, not on it."""
    err = rejected(_cycle_with_tail)
    assert_names(err, TID, CYCLE_FIELD, "s_011")
    assert "'s_011' -> 's_012' -> 's_011'" in str(err)
    assert "a_tail" not in str(err)


def test_chain_cycle_with_a_longer_tail_and_a_branch() -> None:
    """Tails several steps long (and a branch off the cycle) never hide the cycle."""
    def mutate(case: dict[str, Any]) -> None:
        _cycle_with_tail(case)
        case["trace"][-1]["next_step_ids"] = ["a_0"]
        second = copy.deepcopy(case["trace"][-1])
        second.update(step_id="a_0", prev_step_ids=["a_tail"], next_step_ids=[])
        case["trace"].append(second)
        case["trace"][9]["next_step_ids"].append("a_0")       # s_011 -> a_0 as well
        case["trace"][-1]["prev_step_ids"].append("s_011")
    err = rejected(mutate)
    assert_names(err, TID, CYCLE_FIELD, "s_011")
    assert "a_0" not in str(err) and "a_tail" not in str(err)


# -- missing task_id: the error says so instead of naming a task --------------------------

def test_missing_task_id() -> None:
    err = rejected(drop("task_id"))
    assert_names(err, None, "task_id", None)
    assert "without a task_id" in str(err)


def test_non_object_case() -> None:
    for raw in ([], "case", 3, None):
        with pytest.raises(CaseError) as info:
            parse_case(raw)
        assert info.value.task_id is None
        assert info.value.field == "(top level)"


# -- text the engines cannot store (validate.py's documented choice) ----------------------

@pytest.mark.parametrize(("mutate", "field", "offending"), [
    pytest.param(put("trace", 2, "content", value="a\x00b"), "trace[2].content", "s_003",
                 id="nul-in-step-content"),
    pytest.param(put("session", 1, "content", value="\x00"), "session[1].content", "u_2",
                 id="nul-in-input-content"),
    pytest.param(put("memory_store", 1, "memory_id", value="m\x00004"),
                 "memory_store[1].memory_id", "m\x00004", id="nul-in-memory-id"),
    pytest.param(put("trace", 0, "step_id", value=LONE_SURROGATE), "trace[0].step_id",
                 LONE_SURROGATE, id="lone-surrogate-in-step-id"),
    pytest.param(put("trace", 3, "facts", 0, "fact_value", value="x" + LONE_SURROGATE),
                 "trace[3].facts[0].fact_value", "s_004", id="lone-surrogate-in-fact"),
])
def test_unstorable_text(mutate: Mutation, field: str, offending: str) -> None:
    err = rejected(mutate)
    assert_names(err, TID, field, offending)
    assert "NUL" in str(err) or "surrogate" in str(err)
    str(err).encode("utf-8")  # the message itself stays printable and encodable


# -- NaN and other bad trust scores; union-typed fields are named without pydantic tags -----

@pytest.mark.parametrize("value", [float("nan"), float("inf"), "high", True])
def test_bad_trust_score_is_rejected(value: Any) -> None:
    err = rejected(put("memory_store", 1, "trust_score", value=value))
    assert_names(err, TID, "memory_store[1].trust_score", "m_004")


def test_bad_fact_value_is_named_plainly() -> None:
    err = rejected(put("trace", 0, "facts", 0, "fact_value", value=[1]))
    assert_names(err, TID, "trace[0].facts[0].fact_value", "s_001")


# -- require_faults -------------------------------------------------------------------------

def test_require_faults_empty() -> None:
    with pytest.raises(CaseError) as info:
        require_faults(TID, [])
    assert_names(info.value, TID, "diagnosed_faults", None)


def test_require_faults_non_empty() -> None:
    require_faults(TID, ["m_f003"])


def test_empty_diagnosed_faults_is_fine_for_parsing() -> None:
    case = fresh()
    case["diagnosed_faults"] = []
    assert parse_case(case).diagnosed_faults == []


# -- valid input passes ---------------------------------------------------------------------

def test_example_is_valid() -> None:
    case = parse_case(fresh())
    assert case.task_id == TID
    assert [s.step_id for s in case.trace][:2] == ["s_001", "s_002"]
    assert case.diagnosed_faults == ["m_f003"]


@pytest.mark.parametrize("mutate", [
    pytest.param(put("trace", 0, "timestamp", value=2**63 - 1), id="int64-max"),
    pytest.param(put("memory_store", 1, "created_at", value=-(2**63)), id="int64-min"),
    pytest.param(put("memory_store", 1, "trust_score", value=0.25), id="float-trust"),
    pytest.param(put("memory_store", 1, "trust_score", value=1), id="int-trust"),
    pytest.param(put("trace", 0, "content", value=""), id="empty-content"),
    pytest.param(add("trace", 2, "invalidated_memory_ids", value="m_004"),
                 id="invalidated-on-non-mutation-step"),
    pytest.param(put("memory_store", 3, "supersedes", value="m_004"), id="supersedes"),
])
def test_valid_variants_pass(mutate: Mutation) -> None:
    case = fresh()
    mutate(case)
    parse_case(case)


HOSTILE_IDS = {
    TID: "task 'q' \"dq\" `bt` \\ \n ü } RETURN 1 //",
    "u_1": "u \"double\" 'single' \\\" RETURN 1",
    "u_2": "u\\back\\slash\\",
    "m_001": "m`Node`",
    "m_f003": "m_ünïcødé_💥_日本語_\u200b",
    "s_001": "MATCH (n) DETACH DELETE n",
    "s_002": "$param",
    "s_003": "} RETURN 1 //",
    "s_005": "x' }) DETACH DELETE n //",
    "s_007": "line\nbreak\r\ttab",
    "s_008": "\"; MATCH (n) DETACH DELETE n; //",
    "s_012": "{id: 1}",
}


def rename_ids(node: Any, mapping: dict[str, str]) -> Any:
    """Replace every string equal to an old id (ids never occur inside other strings here)."""
    if isinstance(node, str):
        return mapping.get(node, node)
    if isinstance(node, list):
        return [rename_ids(v, mapping) for v in node]
    if isinstance(node, dict):
        return {k: rename_ids(v, mapping) for k, v in node.items()}
    return node


def hostile_case() -> dict[str, Any]:
    case: dict[str, Any] = rename_ids(fresh(), HOSTILE_IDS)
    case["trace"][1]["content"] = "'; DROP TABLE x; -- \"`\\\n💥 MATCH (n) DETACH DELETE n"
    return case


def test_hostile_ids_are_valid_and_kept_verbatim() -> None:
    raw = hostile_case()
    case = parse_case(raw)
    assert case.task_id == HOSTILE_IDS[TID]
    assert [u.input_id for u in case.session] == [HOSTILE_IDS["u_1"], HOSTILE_IDS["u_2"]]
    assert case.trace[0].step_id == "MATCH (n) DETACH DELETE n"
    assert case.trace[5].step_id == "line\nbreak\r\ttab"
    assert case.trace[1].content == raw["trace"][1]["content"]
    assert case.diagnosed_faults == [HOSTILE_IDS["m_f003"]]
    assert case.model_dump(mode="json", exclude_defaults=True)["trace"][6]["used_ids"] == [
        HOSTILE_IDS["s_007"], HOSTILE_IDS["m_f003"], HOSTILE_IDS["u_2"]]


def test_hostile_ids_still_get_checked() -> None:
    raw = hostile_case()
    raw["trace"][3]["used_ids"].append(HOSTILE_IDS["s_002"] + "x")
    with pytest.raises(CaseError) as info:
        parse_case(raw)
    assert_names(info.value, HOSTILE_IDS[TID], "trace[3].used_ids", "$paramx")


# -- derive_edges against the spec's edge table ---------------------------------------------

def edges_of(raw: dict[str, Any]) -> list[Edge]:
    return derive_edges(parse_case(raw))


def by_label(edges: list[Edge], label: EdgeLabel) -> dict[tuple[str, str], bool | None]:
    return {(e.src, e.dst): e.sufficient for e in edges if e.label == label}


def test_edges_are_unique_per_label_and_deterministic() -> None:
    edges = edges_of(fresh())
    keys = [(e.label, e.src, e.dst) for e in edges]
    assert len(keys) == len(set(keys))
    assert edges == edges_of(fresh())


def test_chain_edges_deduplicated_from_prev_and_next() -> None:
    chain = by_label(edges_of(fresh()), EdgeLabel.CHAIN)
    order = ["s_001", "s_002", "s_003", "s_004", "s_005", "s_007", "s_008", "s_009", "s_010",
             "s_011", "s_012"]
    assert chain == {(a, b): None for a, b in pairwise(order)}


def test_chain_from_one_side_only() -> None:
    raw = fresh()
    raw["trace"][2]["prev_step_ids"].append("s_001")   # s_001 does not list s_003 as next
    raw["trace"][0]["next_step_ids"].append("s_004")   # s_004 does not list s_001 as prev
    chain = by_label(edges_of(raw), EdgeLabel.CHAIN)
    assert ("s_001", "s_003") in chain and ("s_001", "s_004") in chain
    assert len(chain) == 12


def test_cite_and_support_by_kind_with_sufficiency() -> None:
    edges = edges_of(fresh())
    cite, support = by_label(edges, EdgeLabel.CITE), by_label(edges, EdgeLabel.SUPPORT)
    assert cite[("u_1", "s_001")] is True
    assert cite[("u_1", "s_002")] is True
    assert cite[("s_001", "s_002")] is False
    assert cite[("s_007", "s_008")] is False
    assert cite[("u_2", "s_008")] is False
    assert cite[("s_004", "s_005")] is True
    assert support == {("m_001", "s_007"): False, ("m_f003", "s_007"): False,
                       ("m_f003", "s_008"): True, ("m_001", "s_010"): False}
    assert not any(src.startswith("m_") for src, _ in cite)
    used = sum(len(s["used_ids"]) for s in BASE["trace"])
    assert len(cite) + len(support) == used


def test_duplicate_used_ids_make_one_edge() -> None:
    raw = fresh()
    raw["trace"][6]["used_ids"].append("m_f003")
    raw["trace"][6]["used_ids"].append("u_2")
    edges = edges_of(raw)
    assert sum(1 for e in edges if (e.label, e.src, e.dst) ==
               (EdgeLabel.SUPPORT, "m_f003", "s_008")) == 1
    assert by_label(edges, EdgeLabel.SUPPORT)[("m_f003", "s_008")] is True
    assert sum(1 for e in edges if (e.src, e.dst) == ("u_2", "s_008")) == 1


def test_produce_edges() -> None:
    assert by_label(edges_of(fresh()), EdgeLabel.PRODUCE) == {
        ("s_001", "m_001"): None, ("s_005", "m_f003"): None}


def test_supersede_and_derive() -> None:
    raw = fresh()
    raw["memory_store"][2]["supersedes"] = "m_004"                    # m_005 supersedes m_004
    raw["memory_store"][3]["derived_from"] = ["m_004", "m_005"]       # m_006 from both
    raw["memory_store"][3]["sufficient_from"] = ["m_005"]
    edges = edges_of(raw)
    assert by_label(edges, EdgeLabel.SUPERSEDE) == {("m_004", "m_005"): True}
    assert by_label(edges, EdgeLabel.DERIVE) == {("m_004", "m_006"): False,
                                                  ("m_005", "m_006"): True}
    assert by_label(edges_of(fresh()), EdgeLabel.SUPERSEDE) == {}
    assert by_label(edges_of(fresh()), EdgeLabel.DERIVE) == {}


def test_invalidation_edges_only_on_delete_update_consolidate() -> None:
    raw = fresh()
    raw["trace"][0]["step_type"] = "memory_delete"
    raw["trace"][0]["invalidated_memory_ids"] = ["m_004"]
    raw["trace"][4]["step_type"] = "memory_update"
    raw["trace"][4]["invalidated_memory_ids"] = ["m_005"]
    raw["trace"][5]["step_type"] = "memory_consolidate"
    raw["trace"][5]["invalidated_memory_ids"] = ["m_004", "m_006"]
    raw["trace"][6]["invalidated_memory_ids"] = ["m_001"]       # a claim: no edge
    raw["trace"][1]["step_type"] = "memory_write"
    raw["trace"][1]["invalidated_memory_ids"] = ["m_006"]       # a write: no edge
    edges = edges_of(raw)
    assert by_label(edges, EdgeLabel.DELETE) == {("m_004", "s_001"): None}
    assert by_label(edges, EdgeLabel.UPDATE) == {("m_005", "s_005"): None}
    assert by_label(edges, EdgeLabel.CONSOLIDATE) == {("m_004", "s_007"): None,
                                                      ("m_006", "s_007"): None}
    # PRODUCE is unaffected by the step types
    assert ("s_001", "m_001") in by_label(edges, EdgeLabel.PRODUCE)


def test_initiate_to_earliest_step_of_each_turn() -> None:
    assert by_label(edges_of(fresh()), EdgeLabel.INITIATE) == {
        ("u_1", "s_001"): None, ("u_2", "s_007"): None}


def test_initiate_uses_timestamp_not_trace_order() -> None:
    raw = fresh()
    raw["trace"][9]["timestamp"] = 150          # s_011 is now the earliest of turn 2
    initiate = by_label(edges_of(raw), EdgeLabel.INITIATE)
    assert initiate == {("u_1", "s_001"): None, ("u_2", "s_011"): None}


def test_initiate_tie_goes_to_trace_position_not_id() -> None:
    raw = fresh()
    raw["trace"][8]["timestamp"] = 150          # s_010
    raw["trace"][9]["timestamp"] = 150          # s_011
    raw["trace"][8], raw["trace"][9] = raw["trace"][9], raw["trace"][8]   # s_011 first
    initiate = by_label(edges_of(raw), EdgeLabel.INITIATE)
    assert initiate[("u_2", "s_011")] is None
    assert ("u_2", "s_010") not in initiate


def test_no_initiate_for_a_turn_without_steps() -> None:
    raw = fresh()
    extra = copy.deepcopy(raw["session"][1])
    extra.update(input_id="u_3", turn=3, timestamp=300)
    raw["session"].append(extra)
    initiate = by_label(edges_of(raw), EdgeLabel.INITIATE)
    assert initiate == {("u_1", "s_001"): None, ("u_2", "s_007"): None}
    # and two inputs of one turn both initiate its first step
    raw["session"][2].update(turn=2)
    initiate = by_label(edges_of(raw), EdgeLabel.INITIATE)
    assert initiate[("u_3", "s_007")] is None


def test_example_edge_counts() -> None:
    edges = edges_of(fresh())
    counts = {label: len(by_label(edges, label)) for label in EdgeLabel}
    assert counts == {EdgeLabel.CHAIN: 10, EdgeLabel.CITE: 15, EdgeLabel.SUPPORT: 4,
                      EdgeLabel.PRODUCE: 2, EdgeLabel.DELETE: 0, EdgeLabel.UPDATE: 0,
                      EdgeLabel.CONSOLIDATE: 0, EdgeLabel.SUPERSEDE: 0, EdgeLabel.DERIVE: 0,
                      EdgeLabel.INITIATE: 2}


def test_fault_manifest_entry_without_target_is_accepted() -> None:
    """A wrong-user fault has no earlier record to target: `target: null` is valid."""
    raw = json.loads((Path(__file__).resolve().parents[2] / "examples"
                      / "shopping_poisoned_price.json").read_text())
    raw["evaluation"]["fault_manifest"] = [{"fault_type": "wrong_user", "target": None,
                                            "record": "m_x"}]
    case = parse_case(raw)
    assert case.evaluation is not None and case.evaluation.fault_manifest[0].target is None
