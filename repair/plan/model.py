"""The rollback plan (the paper's rollback-plan schema, with the spec's explanation fields)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Scope = Literal["task", "namespace"]
# The echo sweep's fields (beyond the paper, repair/plan/echo.py and scope.py), and the
# records another conversation's plan reached (repair/plan/namespace.py): not the rules of
# §1-4, so the reference planner (benchmark/reference.py) leaves them out of comparisons.
ECHO_SWEEP_FIELDS = frozenset({"suspected_copies", "scope", "memory_namespace",
                               "namespace_copies", "inherited"})


class NamespaceCopy(BaseModel):
    """A suspected copy in another task of the memory namespace (repair/plan/scope.py)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="the task (conversation) whose record it is")
    memory_id: str
    fault_id: str = Field(description="the diagnosed fault of the planned task it echoes")
    same_record: bool = Field(
        default=False, description="it has the fault's agent id: the fault's own record of "
        "the shared memory as that task recorded it (deleted there, not quarantined)")


class Inherited(BaseModel):
    """A record of the shared memory that an earlier conversation's plan reached, as this
    task holds it (it read the record from the store): beyond the paper, issue 37,
    repair/plan/namespace.py. In A0 unconditionally and never independent evidence (as it is
    in the earlier task's plan); quarantined here when that plan removed it."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str = Field(description="this task's node of the record")
    record_id: str = Field(description="the agent's id of the record")
    from_task: str = Field(description="the earlier conversation whose plan reached it")
    from_memory: str = Field(description="that task's node of the record")
    removed: bool = Field(description="that plan deleted or quarantined it")


class RepairPlan(BaseModel):
    """Field names exactly as docs/method.md §4; lists in trace order."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    delete_memory_ids: list[str] = Field(description="M_del = F")
    quarantine_memory_ids: list[str] = Field(description="(A ∩ V_mem ∩ active) \\ F")
    invalidate_claim_ids: list[str] = Field(description="V_inv: every invalidated step")
    replay_step_ids: list[str] = Field(description="V_replay, in trace order")
    preserve_step_ids: list[str] = Field(description="V_step \\ (V_inv ∪ V_replay)")
    redundant_step_ids: list[str] = Field(default_factory=list)
    suspicious_step_ids: list[str] = Field(
        description="invalidated, excluded from later context, not recomputed")
    seeds: dict[str, str] = Field(description="m → r(m)")
    affected_ids: list[str] = Field(description="A0")
    supported_ids: list[str] = Field(description="P_sup")
    answer_relevant_ids: list[str] = Field(description="A_ans")
    suspected_copies: dict[str, str] = Field(
        default_factory=dict,
        description="beyond the paper (repair/echo.py): active records asserting a diagnosed "
                    "fault's value with no recorded edge from it, copy → fault")
    scope: Scope = Field(
        default="task", description="beyond the paper: where the echo sweep looked, the task "
        "or every task of its memory namespace (`--scope namespace`)")
    memory_namespace: str | None = Field(
        default=None, description="the task's memory namespace, with scope namespace")
    namespace_copies: list[NamespaceCopy] = Field(
        default_factory=list,
        description="with scope namespace: suspected copies among the active records of the "
                    "namespace's other tasks, each naming its task")
    inherited: list[Inherited] = Field(
        default_factory=list,
        description="beyond the paper: in a namespace plan, the shared records an earlier "
                    "conversation's plan reached that this task read (seeds besides F)")


# -- a namespace plan (beyond the paper; issue 37, repair/plan/namespace.py) -----------------

NAMESPACE_PLAN_FORMAT: Literal["provrepair.namespace-plan/1"] = "provrepair.namespace-plan/1"
Reach = Literal["fault", "removed", "affected"]


class RecordLink(BaseModel):
    """How a conversation was reached: it read a record an earlier conversation's plan
    reached (`fault`: the diagnosed fault itself; `removed`: quarantined there; `affected`:
    in its affected region, kept with independent support)."""

    model_config = ConfigDict(extra="forbid")

    record_id: str = Field(description="the agent's id of the record")
    memory_id: str = Field(description="this conversation's node of the record")
    from_task: str | None = Field(description="the earlier conversation; None for a fault "
                                  "first held here")
    from_memory: str | None = None
    reach: Reach


class ConversationPlan(BaseModel):
    """One reached conversation: its rollback plan, seeded by what reached it."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    started_at: int | None = Field(description="the conversation's absolute time")
    reached_by: list[RecordLink]
    final_answer_id: str | None
    answer: str | None = Field(description="the final answer it gave")
    answer_affected: bool = Field(description="its final answer is invalidated: the user was "
                                  "given an answer the fault reached")
    plan: RepairPlan


class AffectedAnswer(BaseModel):
    """A conversation whose final answer the fault reached: whom to tell."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    started_at: int | None
    final_answer_id: str
    answer: str


class RecordDisposition(BaseModel):
    """One record of the shared memory the plans reached, and what becomes of it."""

    model_config = ConfigDict(extra="forbid")

    record_id: str
    disposition: Literal["delete", "quarantine", "affected"]
    task_id: str = Field(description="the first conversation whose plan reached it")
    memory_id: str


class NamespacePlan(BaseModel):
    """The contamination of diagnosed records across the conversations of a shared memory,
    computed to a fixpoint in time order (repair/plan/namespace.py)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["provrepair.namespace-plan/1"] = NAMESPACE_PLAN_FORMAT
    namespace: str
    faults: list[str] = Field(description="the diagnosed records, by agent id")
    conversations_in_namespace: int
    affected_answers: list[AffectedAnswer] = Field(
        description="the conversations whose final answer was affected, in time order")
    records: list[RecordDisposition]
    conversations: list[ConversationPlan] = Field(
        description="every conversation the fault reached, in time order, with its plan")
