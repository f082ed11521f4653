"""Trace order, defined once: which of a task's final answers is *the* final answer.

v_final (docs/method.md §4) is the last `final_answer` step of the trace by timestamp, ties
broken by trace position. The planner (over nodes read from the store), the replay executor,
the baselines and the benchmark's gold labels all choose it here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from provrepair.provenance.models import Case, ExecutionStep
from provrepair.provenance.vocab import StepType

T = TypeVar("T")


def last_final_answer(answers: Iterable[T], order: Callable[[T], tuple[int | str, ...]]) -> T | None:
    """Of a task's final_answer steps, the last by `order` = (timestamp, trace position[, id])."""
    return max(answers, key=order, default=None)


def final_answer_step(case: Case) -> ExecutionStep | None:
    """v_final of a case (None when its trace has no final answer)."""
    answers = [(step, i) for i, step in enumerate(case.trace)
               if step.step_type is StepType.FINAL_ANSWER]
    last = last_final_answer(answers, lambda item: (item[0].timestamp, item[1]))
    return last[0] if last is not None else None
