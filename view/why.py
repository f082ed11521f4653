"""Why a node got its disposition under a run, as the rule of the plan that decided it.

Rule numbers are those of the paper's appendix table (repair/plan/rules.py): 1 delete the
diagnosed fault, 2 quarantine unsupported affected memory, 3 keep what has independent
support, 4 replay unsupported answer-relevant nodes, 5 invalidate the rest without replay
(suspicious), 6 replay the provenance seed, 7 always regenerate the final answer.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from provrepair.provenance.vocab import RunMark, StepType


def reasons(node: Mapping[str, Any], marks: Collection[RunMark],
            seed_of: Mapping[str, list[str]]) -> list[str]:
    """One line per disposition of a recorded node, the deciding rule first."""
    lines = [*_deletion(marks), *_replay(node, marks, seed_of), *_kept(marks)]
    if RunMark.AFFECTED in marks and not lines:
        lines.append("affected: reached from a fault seed through explicit dependencies (A0)")
    elif RunMark.AFFECTED in marks:
        lines.append("in the contaminated region A0 (reached from a fault seed)")
    return lines


def _deletion(marks: Collection[RunMark]) -> list[str]:
    lines = []
    if RunMark.FAULTY in marks:
        lines.append("rule 1: diagnosed faulty memory, deleted from the active store")
    if RunMark.QUARANTINED in marks:
        lines.append("rule 2: affected memory without independent support, quarantined "
                     "(out of retrieval)")
    return lines


def _replay(node: Mapping[str, Any], marks: Collection[RunMark],
            seed_of: Mapping[str, list[str]]) -> list[str]:
    faults = ", ".join(seed_of.get(str(node.get("id")), []))
    if RunMark.REPLAY not in marks:
        lines = []
        if RunMark.SEED in marks:
            lines.append(f"provenance seed r(m) of {faults}")
        if RunMark.SUSPICIOUS in marks:
            lines.append("rule 5: unsupported and not answer-relevant: invalidated, excluded "
                         "from later context, not replayed (suspicious)")
        elif RunMark.INVALIDATED in marks:
            lines.append("invalidated; not replayed itself: refreshed by replaying the action "
                         "that produced it (rule 4)")
        return lines
    if RunMark.SEED in marks:
        return [f"rule 6: provenance seed r(m) of {faults}, replayed to regenerate its record"]
    if node.get("step_type") == StepType.FINAL_ANSWER:
        return ["rule 7: the final answer is always regenerated"]
    if RunMark.ANSWER_RELEVANT in marks:
        return ["rule 4: unsupported and answer-relevant: invalidated and replayed"]
    return ["replayed: an invalidated prerequisite a replayed step needs (execution closure)"]


def _kept(marks: Collection[RunMark]) -> list[str]:
    if RunMark.SUPPORTED in marks:
        note = " (replayed anyway, see above)" if RunMark.REPLAY in marks else ""
        return ["rule 3: affected, but independently supported by trusted evidence: its "
                f"output is kept{note}"]
    if RunMark.PRESERVED in marks:
        return ["preserved: not invalidated, kept as recorded"]
    return []


def new_node_reason(node: Mapping[str, Any]) -> list[str]:
    """Why a node written by a repair exists."""
    run, old = node.get("origin_run", "?"), node.get("replaces")
    if node.get("kind") == "step":
        what = f"replayed version of step {old}" if old else "a step added by the replay"
    else:
        what = f"regenerated record replacing {old}" if old else "a record written by the replay"
    return [f"written by repair run {run}: {what}"]
