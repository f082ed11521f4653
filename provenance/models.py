"""The case format (`provrepair.case/1`, docs/case-format.md) as pydantic models: pure data.

These models are the single definition of the format; `provrepair schema` exports their JSON
Schema. Types are strict where the spec rejects coercion (a float or boolean timestamp, a
number where an id belongs). Cross-record rules (ids, references, cycles) are checked in
`provenance.validate`, not here, so that the live recorder can apply them incrementally.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    field_validator,
    model_serializer,
)

from provrepair.provenance.vocab import FaultType, MemorySource, MemoryStatus, StepStatus, StepType

FORMAT = "provrepair.case/1"

Id = StrictStr
# Integer epoch timestamps; both engines store 64-bit integers, so larger ones are refused.
Timestamp = Annotated[StrictInt, Field(ge=-(2**63), le=2**63 - 1)]
Turn = Annotated[StrictInt, Field(ge=1, le=2**63 - 1)]
JsonScalar = StrictStr | StrictInt | StrictFloat | StrictBool | None


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=False)


def _absent_stays_absent(data: Any, key: str) -> Any:
    """A dump without an optional *ext* field that is unset (record_id, memory_namespace):
    a case that does not use it dumps (and hashes) as it always did."""
    if isinstance(data, dict) and data.get(key) is None:
        data.pop(key, None)
    return data


class UserInput(_Data):
    input_id: Id
    task_id: StrictStr
    turn: Turn
    content: StrictStr
    timestamp: Timestamp


class MemoryRecord(_Data):
    memory_id: Id
    task_id: StrictStr
    content: StrictStr
    source: MemorySource
    last_modified_by: Id | None
    fault_type: FaultType | None = Field(
        default=None, description="evaluation-only label; repair never reads it")
    created_at: Timestamp
    last_modified_at: Timestamp
    derived_from: list[Id]
    supersedes: Id | None
    trust_score: StrictFloat | StrictInt | None = Field(
        default=None, description="recorded only")
    status: MemoryStatus
    fact_key: StrictStr | None = None
    fact_value: StrictStr | None = None
    entity_id: StrictStr | None = None
    sufficient_from: list[Id] = Field(
        default_factory=list, description="ext: subset of derived_from that alone entails this record")
    record_id: Id | None = Field(
        default=None, description="ext: the id the agent's own memory store gives this record, "
        "when it differs from memory_id (a later version of a record updated in place); absent "
        "means memory_id")

    @model_serializer(mode="wrap")
    def _absent_record_id(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _absent_stays_absent(handler(self), "record_id")

    @field_validator("trust_score", mode="before")
    @classmethod
    def _int64_trust_score(cls, value: Any) -> Any:
        # Both engines store 64-bit integers; a larger one would come back changed.
        if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
            raise ValueError("integer outside the 64-bit range")
        return value


class Fact(_Data):
    entity_id: StrictStr
    fact_key: StrictStr
    fact_value: JsonScalar
    derivation: dict[str, Any] | None = None


class ExecutionStep(_Data):
    step_id: Id
    task_id: StrictStr
    step_type: StepType
    content: StrictStr
    prev_step_ids: list[Id]
    next_step_ids: list[Id]
    invalidated_memory_ids: list[Id]
    generated_memory_ids: list[Id]
    used_ids: list[Id]
    tool_name: StrictStr | None = None
    tool_args: dict[str, Any] | None = None
    timestamp: Timestamp
    turn: Turn
    sufficient_ids: list[Id] = Field(
        default_factory=list, description="ext: subset of used_ids each of which alone entails the step")
    status: StepStatus = StepStatus.OK
    facts: list[Fact] | None = None
    derivation: dict[str, Any] | None = Field(
        default=None, description="ext: expression tree {fn, args} for offline replay")


class ToolSpec(_Data):
    name: StrictStr
    side_effect: StrictBool
    compensate: StrictStr | None = None
    idempotent: StrictBool


class FaultManifestEntry(BaseModel):
    """One injected fault; the paper's manifests carry tool-specific extra keys, kept as given."""

    model_config = ConfigDict(extra="allow")
    fault_type: FaultType
    target: StrictStr | None  # null for faults with no prior record (an injected wrong-user one)


class Evaluation(_Data):
    expected_answer: StrictStr
    required_facts: list[StrictStr]
    benign_memory_ids: list[Id]
    gold_affected_ids: list[Id]
    gold_affected_claim_ids: list[Id]
    clean_trace: list[ExecutionStep]
    clean_memory_store: list[MemoryRecord]
    fault_manifest: list[FaultManifestEntry]
    primary_fault_type: FaultType


class Case(_Data):
    format: Literal["provrepair.case/1"]
    task_id: StrictStr
    domain: StrictStr
    session: list[UserInput]
    memory_store: list[MemoryRecord]
    trace: list[ExecutionStep]
    diagnosed_faults: list[Id]
    tools: list[ToolSpec] = Field(default_factory=list)
    world: dict[str, Any] = Field(default_factory=dict)
    evaluation: Evaluation | None = None
    memory_namespace: StrictStr | None = Field(
        default=None, min_length=1,
        description="ext: the agent memory this task read and wrote (a LangGraph store "
        "namespace, a mem0 user, a memory store id), shared by every conversation that names "
        "it; absent means the task is its own scope (`plan --scope namespace`)")

    @model_serializer(mode="wrap")
    def _absent_namespace(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _absent_stays_absent(handler(self), "memory_namespace")


def case_json_schema() -> dict[str, Any]:
    """JSON Schema of the case format, exported from the models."""
    schema = Case.model_json_schema()
    schema["$id"] = "https://provrepair.dev/schema/provrepair.case-1.json"
    schema["title"] = "provrepair case (provrepair.case/1)"
    return schema
