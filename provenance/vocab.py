"""The one vocabulary: enums of the case format and of the graph (labels, relationship types).

Cypher files may use only the labels and relationship types named here; the Cypher linter is
fed this vocabulary (`python -m provrepair.provenance.vocab`) so a typo such as `:Stpe` fails CI.
"""

from __future__ import annotations

import json
from enum import StrEnum


class StepType(StrEnum):
    MEMORY_READ = "memory_read"
    CLAIM = "claim"
    PLAN = "plan"
    TOOL_ACTION = "tool_action"
    TOOL_OBSERVATION = "tool_observation"
    FINAL_ANSWER = "final_answer"
    MEMORY_WRITE = "memory_write"
    MEMORY_DELETE = "memory_delete"
    MEMORY_UPDATE = "memory_update"
    MEMORY_CONSOLIDATE = "memory_consolidate"


MUTATION_STEP_TYPES = frozenset(
    {StepType.MEMORY_WRITE, StepType.MEMORY_DELETE, StepType.MEMORY_UPDATE,
     StepType.MEMORY_CONSOLIDATE}
)


class MemoryStatus(StrEnum):
    ACTIVE = "active"
    DELETED = "deleted"
    QUARANTINED = "quarantined"
    SUPERSEDED = "superseded"


class MemorySource(StrEnum):
    USER_INPUT = "user_input"
    TOOL_OBSERVATION = "tool_observation"
    AGENT_SUMMARY = "agent_summary"
    CLAIM = "claim"
    INJECTED = "injected"


class StepStatus(StrEnum):
    OK = "ok"
    ERROR = "error"


class FaultType(StrEnum):
    POISONED = "poisoned"
    STALE = "stale"
    WRONG_USER = "wrong_user"
    SUMMARY_DRIFT = "summary_drift"


class EdgeLabel(StrEnum):
    """Relationship types of the provenance graph (docs/case-format.md, 'Edges')."""

    CHAIN = "CHAIN"
    CITE = "CITE"
    SUPPORT = "SUPPORT"
    PRODUCE = "PRODUCE"
    DELETE = "DELETE"
    UPDATE = "UPDATE"
    CONSOLIDATE = "CONSOLIDATE"
    SUPERSEDE = "SUPERSEDE"
    DERIVE = "DERIVE"
    INITIATE = "INITIATE"


# Edges that carry a `sufficient` property (docs/case-format.md edge table).
SUFFICIENCY_EDGES = frozenset(
    {EdgeLabel.CITE, EdgeLabel.SUPPORT, EdgeLabel.SUPERSEDE, EdgeLabel.DERIVE}
)

# The mutation edge a memory gets into the step that retires it, by step type.
INVALIDATION_EDGE = {
    StepType.MEMORY_DELETE: EdgeLabel.DELETE,
    StepType.MEMORY_UPDATE: EdgeLabel.UPDATE,
    StepType.MEMORY_CONSOLIDATE: EdgeLabel.CONSOLIDATE,
}


class NodeLabel(StrEnum):
    """Node labels. `Node` is the shared, indexed label every task node carries."""

    NODE = "Node"
    TASK = "Task"
    USER_INPUT = "UserInput"
    MEMORY = "Memory"
    STEP = "Step"
    MEMORY_READ = "MemoryRead"
    CLAIM = "Claim"
    PLAN = "Plan"
    TOOL_ACTION = "ToolAction"
    TOOL_OBSERVATION = "ToolObservation"
    FINAL_ANSWER = "FinalAnswer"
    MEMORY_WRITE = "MemoryWrite"
    MEMORY_DELETE = "MemoryDelete"
    MEMORY_UPDATE = "MemoryUpdate"
    MEMORY_CONSOLIDATE = "MemoryConsolidate"
    EVAL_RECORD = "EvalRecord"  # lives in the evaluation vault, never in the planner's graph
    REPAIR_RUN = "RepairRun"
    TASK_LOCK = "TaskLock"  # one per task key; outlives ingest's swap (provenance/lock.py)
    # The live capture's journal of OTLP spans (loaders/otel_runs.py), apart from the graph
    CAPTURE_SPAN = "CaptureSpan"
    # A run's dispositions as labels, for Neo4j Browser (cypher/browser/label_latest_run.cypher)
    FAULTY = "Faulty"
    SEED = "Seed"
    AFFECTED = "Affected"
    SUPPORTED = "Supported"
    QUARANTINED = "Quarantined"
    INVALIDATED = "Invalidated"
    ANSWER_RELEVANT = "AnswerRelevant"
    REPLAYED = "Replayed"
    PRESERVED = "Preserved"
    SUSPICIOUS = "Suspicious"
    REGENERATED = "Regenerated"  # written by a repair run
    # One record of a shared agent memory, (namespace, agent id); every task's memory node of
    # it links to it (provenance/agent_records.py): a fault followed across conversations
    AGENT_RECORD = "AgentRecord"
    NAMESPACE_RUN = "NamespaceRun"  # a repair of a namespace's conversations (repair/namespace)
    # The call log: one per tool call a repair issues or asks a person about
    # (provenance/state/calls.py, repair/tools/calllog.py)
    TOOL_CALL = "ToolCall"


STEP_LABEL = {t: NodeLabel[t.name] for t in StepType}


class RepairEdge(StrEnum):
    """Relationship types a repair adds between provenance nodes."""

    REPLAYS = "REPLAYS"  # replayed step → the step it replaces


class RecordEdge(StrEnum):
    """The link from a task's memory node to the record of the shared memory it is a version
    of (provenance/agent_records.py); never a provenance edge: the planner does not walk it."""

    OF_RECORD = "OF_RECORD"


class RunMark(StrEnum):
    """Relationship types from a :RepairRun to the nodes it gave each disposition."""

    FAULTY = "FAULTY"                  # diagnosed fault, deleted
    SEED = "SEED"                      # r(m) of some fault
    AFFECTED = "AFFECTED"              # A0
    SUPPORTED = "SUPPORTED"            # P_sup
    QUARANTINED = "QUARANTINED"
    INVALIDATED = "INVALIDATED"
    ANSWER_RELEVANT = "ANSWER_RELEVANT"
    REPLAY = "REPLAY"
    PRESERVED = "PRESERVED"
    SUSPICIOUS = "SUSPICIOUS"

# The task lock's properties (:TaskLock, cypher/locks/*.cypher): who holds the task's writes.
LOCK_PROPERTIES = ("holder", "holder_pid", "holder_host", "holder_at", "purpose", "lock_probe")

# The live capture's journal (:CaptureSpan, cypher/capture/*.cypher; loaders/otel_runs.py).
CAPTURE_PROPERTIES = ("span_key", "trace_id", "start_ns", "written_ns", "span_json", "recovered",
                      "warnings", "capture_token")

# The call log's properties (:ToolCall, cypher/calls/*.cypher; repair/tools/calllog.py).
# (tests/unit/test_call_gate.py checks them against what the log writes)
CALL_PROPERTIES = ("call_key", "created", "call_id", "step_id", "tool", "args_json", "status",
                   "side_effect", "run_id", "attempts", "stopped_run", "reason", "approved_run",
                   "approved_at", "issued_at", "finished_at", "result", "result_status",
                   "facts_json", "error", "earlier_run")

# Property keys the queries may use (fed to the linter so typos are caught).
PROPERTY_KEYS = sorted({*LOCK_PROPERTIES, *CAPTURE_PROPERTIES, *CALL_PROPERTIES,
    "uid", "task_key", "task_id", "id", "kind", "position", "ts", "turn", "content", "timestamp",
    "source", "last_modified_by", "created_at", "last_modified_at", "derived_from",
    "supersedes", "trust_score", "status", "fact_key", "fact_value", "entity_id",
    "sufficient_from", "record_id", "step_type", "prev_step_ids", "next_step_ids",
    "invalidated_memory_ids", "generated_memory_ids", "used_ids", "sufficient_ids",
    "tool_name", "tool_args_json", "facts_json", "derivation_json", "sufficient",
    "domain", "diagnosed_faults", "tools_json", "world_json", "content_hash", "complete",
    "ingested_at", "evaluation_json", "fault_types_json", "eval_key", "memory_namespace",
    "run_key", "run_id", "method", "created", "plan_json", "summary_json",
    "origin_run", "replaces", "committed", "status_before", "status_run", "status_recorded",
    "answer", "finished", "trust_score_json",
    "record_key", "namespace", "started_at", "ended_at", "faults_json", "conversations_json",
})


def linter_vocabulary() -> dict[str, list[str]]:
    """The schema the Cypher linter checks labels, types and keys against."""
    return {
        "labels": sorted(label.value for label in NodeLabel),
        "relationshipTypes": sorted([*(label.value for label in EdgeLabel),
                                     *(mark.value for mark in RunMark),
                                     *(edge.value for edge in RepairEdge),
                                     *(edge.value for edge in RecordEdge)]),
        "propertyKeys": PROPERTY_KEYS,
    }


if __name__ == "__main__":  # pragma: no cover - used by `make lint-cypher`
    print(json.dumps(linter_vocabulary(), indent=2))
