"""The state of a tool call a repair issues: the call log (`:ToolCall` nodes,
repair/tools/calllog.py), its statuses, their transitions and the identity of a call.

A call is identified by the step it replays, the tool and its canonical arguments: the same
call at the same step is the same `:ToolCall` in every run of the task version (`repair`,
`--resume`, `--continue`, a rerun after a crash), so each run reads what the earlier ones
did before it issues anything.

    (none) ── a stop shows it ──────────────────────────→ PENDING   a person must decide
    PENDING ── repair --resume --approve STEP ─────────→ APPROVED
    PENDING ── repair --resume --skip STEP ────────────→ SKIPPED   (the step stays unresolved)
    (none) | APPROVED ── intent committed, then sent ──→ ISSUING   outcome unknown until …
    ISSUING ── the tool answered ──────────────────────→ DONE      result kept, reused, never re-sent
    ISSUING ── the tool answered an error / raised ────→ FAILED    it may have acted: never re-sent
    ISSUING ── refused before sending (its arguments) ─→ REJECTED  nothing happened; an approval
        covers one sending, so it waits for a new decision
    ISSUING, seen by a later run (no result) ──────────→ the outcome is unknown: PENDING for a
        person ("may have been issued"), unless re-sending is safe (a read-only or idempotent
        tool, or one that accepts the call's idempotency key: then re-sent with the same key)

A read-only call has no effect to protect: it is logged once it answered (DONE, FAILED) with
the run's write-back, without an intent. Queries never spell a status: Python writes them as
row values and reads them back (no Cypher filter on a status).
"""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum
from typing import Any


class CallStatus(StrEnum):
    PENDING = "pending"      # shown at a stop; waits for a person
    APPROVED = "approved"    # a person approved exactly this call; not issued yet
    SKIPPED = "skipped"      # a person chose not to issue it
    ISSUING = "issuing"      # intent committed: it may have been sent
    DONE = "done"            # the tool answered; the answer is the call's result for good
    FAILED = "failed"        # the tool answered an error, or raised
    REJECTED = "rejected"    # refused before it was sent (arguments the tool cannot take)


# Calls that may have acted in the world (what `history` and `show` list as side effects).
ISSUED = frozenset({CallStatus.ISSUING, CallStatus.DONE, CallStatus.FAILED})

# The class of a tool that cannot act in the world (repair/tools/declared.py SideEffect).
READ_ONLY_CLASS = "read_only"


def kept_call_params() -> dict[str, Any]:
    """The parameters of the queries that drop a task version (swap_staged_task, delete_task)
    saying what its call log keeps for the next version under the id: only the calls that may
    have acted in the world (`is_issued`) of tools that are not read-only. A read-only answer
    belongs to the version that asked (a new version asks again), and what only waited on a
    person (shown, approved, skipped, refused before sending) goes with the version's stops.
    A kept call keeps its result (DONE) or failure (FAILED); any other (a person's decision
    since it was sent: --skip, --approve, shown again) becomes of unknown outcome (ISSUING):
    a decision holds for the version it was made in, and the new version's repair stops for
    a person at that step, showing the call ("may have been issued")."""
    return {"issued": sorted(ISSUED), "read_only": READ_ONLY_CLASS,
            "unknown": CallStatus.ISSUING.value}


def is_issued(status: object, attempts: int = 0) -> bool:
    """The call may have acted in the world: its status says so, or it was sent before
    (`attempts`, which counts sendings: a refused one is not counted) and a person's decision
    since (--skip, a stop showing it again) relabelled it; such a call stays visible."""
    return status in ISSUED or attempts > 0


def has_result(status: object) -> bool:
    """The call ran and its answer is recorded: a later run reuses it, never re-sends it."""
    return status == CallStatus.DONE


def outcome_unknown(status: object) -> bool:
    """An intent without a result: the call may have been sent (a crash, no answer)."""
    return status == CallStatus.ISSUING


def approved(status: object) -> bool:
    return status == CallStatus.APPROVED


def skipped(status: object) -> bool:
    return status == CallStatus.SKIPPED


def canonical_args(args: dict[str, Any]) -> str:
    """The arguments as one text: keys sorted, no spaces, unicode kept (what a person is shown
    and what the call's hash covers)."""
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


def call_id(step_id: str, tool: str, args: dict[str, Any]) -> str:
    """The short hash naming a call: the replayed step, the tool and its canonical arguments.
    A different tool or any different argument is a different call."""
    text = "\x00".join((step_id, tool, canonical_args(args)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def idempotency_key(task_key: str, call: str) -> str:
    """The key sent with every attempt of one call, to a tool that accepts one: the same call
    of the same task gets the same key, whichever run re-sends it."""
    return "provrepair-" + hashlib.sha256(f"{task_key}\x00{call}".encode()).hexdigest()[:32]
