"""The fast whole-case check (provenance/bulk_validate.py) gives the located check's verdict.

`validate_case` trusts `plainly_valid` to accept a case without the record-by-record walk, so
a wrong True would let an invalid case in. Both directions are held here: on every mutation
of docs/case-format.md's "Rejected input" table that survives the models, and on random
valid cases with one random cross-record edit each (dangling, wrong-kind, duplicate, foreign,
cyclic or harmless).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from provrepair.provenance.bulk_validate import plainly_valid
from provrepair.provenance.errors import CaseError
from provrepair.provenance.models import Case
from provrepair.provenance.validate import locate_case_errors
from tests.strategies import provenance_cases
from tests.unit.test_rejected_input import REJECTED, Mutation, fresh, put


def located_verdict(case: Case) -> bool:
    try:
        locate_case_errors(case)
    except CaseError:
        return False
    return True


def modelled(mutate: Mutation) -> Case | None:
    """The example with one mutation, as a Case; None where the models already refuse it."""
    raw = fresh()
    mutate(raw)
    try:
        return Case.model_validate(raw)
    except ValueError:
        return None


CROSS_RECORD = [p for p in REJECTED if modelled(p.values[0]) is not None] + [
    pytest.param(put("trace", 10, "next_step_ids", value=["s_010"]), None, None, id="3-cycle"),
    pytest.param(put("trace", 4, "next_step_ids", value=["s_005"]), None, None, id="self-loop"),
]


def test_the_table_has_cross_record_mutations() -> None:
    assert len(CROSS_RECORD) >= 30


@pytest.mark.parametrize(("mutate", "field", "offending"), CROSS_RECORD)
def test_rejected_mutations_are_not_plainly_valid(mutate: Mutation, field: Any,
                                                 offending: Any) -> None:
    case = modelled(mutate)
    assert case is not None
    assert not located_verdict(case)
    assert not plainly_valid(case)


def test_the_example_is_plainly_valid() -> None:
    assert plainly_valid(Case.model_validate(fresh()))


def test_backward_chain_edges_without_a_cycle_are_valid() -> None:
    """A CHAIN edge against trace order is legal; the fast check must not refuse it."""
    raw = fresh()
    raw["trace"][1]["next_step_ids"].append("s_001")      # s_002 → s_001 ...
    raw["trace"][0]["prev_step_ids"].append("s_002")
    raw["trace"][0]["next_step_ids"].remove("s_002")      # ... instead of s_001 → s_002
    raw["trace"][1]["prev_step_ids"].remove("s_001")
    case = Case.model_validate(raw)
    assert located_verdict(case) and plainly_valid(case)


REFERENCE_FIELDS = {
    "step": ["used_ids", "prev_step_ids", "next_step_ids", "generated_memory_ids",
             "invalidated_memory_ids", "sufficient_ids"],
    "memory": ["derived_from", "sufficient_from", "supersedes", "last_modified_by"],
}


def edit(case: Case, data: st.DataObject) -> Case:
    """One random cross-record edit of a copy of the case."""
    case = copy.deepcopy(case)
    ids = ([u.input_id for u in case.session] + [m.memory_id for m in case.memory_store]
           + [s.step_id for s in case.trace] + ["ghost"])
    target = data.draw(st.sampled_from(ids))
    what = data.draw(st.sampled_from(["step", "memory", "duplicate", "task", "fault"]))
    if what == "step":
        step = data.draw(st.sampled_from(case.trace))
        getattr(step, data.draw(st.sampled_from(REFERENCE_FIELDS["step"]))).append(target)
    elif what == "memory" and case.memory_store:
        memory = data.draw(st.sampled_from(case.memory_store))
        name = data.draw(st.sampled_from(REFERENCE_FIELDS["memory"]))
        if name in ("supersedes", "last_modified_by"):
            setattr(memory, name, target)
        else:
            getattr(memory, name).append(target)
    elif what == "duplicate":
        step = data.draw(st.sampled_from(case.trace))
        step.step_id = target
    elif what == "task":
        data.draw(st.sampled_from(case.trace)).task_id = case.task_id + "-other"
    else:
        case.diagnosed_faults.append(target)
    return case


@settings(max_examples=400, deadline=None)
@given(provenance_cases(max_steps=12, max_memories=6), st.data())
def test_fast_and_located_checks_agree(case: Case, data: st.DataObject) -> None:
    assert plainly_valid(case)
    edited = edit(case, data)
    assert plainly_valid(edited) == located_verdict(edited)
