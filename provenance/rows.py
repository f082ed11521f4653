"""Case records ↔ graph rows: the property layout of nodes, edges and the task record.

Every node carries `uid` (indexed key), `task_key` (indexed), `task_id` and `id` verbatim,
`kind`, `position` (order in its list of the case, for exact read-back) and `ts` (the
spec's node timestamp: step `timestamp`, memory `created_at`, input `timestamp`). Scalar
and list-of-string fields are properties; nested values (`tool_args`, `facts`,
`derivation`) are JSON strings (`*_json`), since neither engine stores maps in properties.
Null fields are left out. `fault_type` is evaluation-only and goes to the vault instead.
A memory's `trust_score` is also kept as JSON text (`trust_score_json`): the engines print
doubles with 15 significant digits (0.30000000000000004 came back as 0.3), and read-back
must give the number that was written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from provrepair.provenance.edges import Edge, NodeKind
from provrepair.provenance.keys import node_uid
from provrepair.provenance.models import Case, ExecutionStep, MemoryRecord, ToolSpec, UserInput
from provrepair.provenance.vocab import EdgeLabel, StepType

JSON_FIELDS = ("tool_args", "facts", "derivation")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _node(key: str, node_id: str, task_id: str, kind: str, position: int, ts: int,
          fields: dict[str, Any]) -> dict[str, Any]:
    props = {k: v for k, v in fields.items() if v is not None}
    props.update(task_key=key, task_id=task_id, id=node_id, kind=kind, position=position, ts=ts)
    return {"uid": node_uid(key, node_id), "props": props}


def input_row(key: str, record: UserInput, position: int) -> dict[str, Any]:
    return input_row_json(key, record.model_dump(mode="json"), position)


def memory_row(key: str, record: MemoryRecord, position: int) -> dict[str, Any]:
    return memory_row_json(key, record.model_dump(mode="json"), position)


def step_row(key: str, record: ExecutionStep, position: int) -> dict[str, Any]:
    return step_row_json(key, record.model_dump(mode="json"), position)


# The *_json forms take a record already dumped (`model_dump(mode="json")`): ingest dumps a
# whole case in one call, for its content hash and its rows (one pydantic call per record
# cost as much as the rest of row building, BENCHMARKS.md "Ingest").

def input_row_json(key: str, data: dict[str, Any], position: int) -> dict[str, Any]:
    fields = {k: v for k, v in data.items() if k not in ("input_id", "task_id")}
    return _node(key, data["input_id"], data["task_id"], NodeKind.USER_INPUT, position,
                 data["timestamp"], fields)


def memory_row_json(key: str, data: dict[str, Any], position: int) -> dict[str, Any]:
    fields = {k: v for k, v in data.items() if k not in ("memory_id", "task_id", "fault_type")}
    if data.get("trust_score") is not None:
        fields["trust_score_json"] = dumps(data["trust_score"])
    return _node(key, data["memory_id"], data["task_id"], NodeKind.MEMORY, position,
                 data["created_at"], fields)


def step_row_json(key: str, data: dict[str, Any], position: int) -> dict[str, Any]:
    fields = {k: v for k, v in data.items()
              if k not in ("step_id", "task_id") and k not in JSON_FIELDS}
    for name in JSON_FIELDS:
        if data.get(name) is not None:
            fields[f"{name}_json"] = dumps(data[name])
    return _node(key, data["step_id"], data["task_id"], NodeKind.STEP, position,
                 data["timestamp"], fields)


def node_type(props: dict[str, Any]) -> str:
    """A node row's label set, as the write queries name it: step_<type>, memories or
    user_inputs (labels cannot be parameters, so each has its own query text)."""
    if props["kind"] == NodeKind.STEP:
        return f"step_{props['step_type']}"
    return "memories" if props["kind"] == NodeKind.MEMORY else "user_inputs"


# The write query of each kind of node row and of each edge type, every name spelled out so
# that a reader (or grep) finds each use of each cypher/ingest/ file; labels and relationship
# types cannot be parameters, so each label set has its own query text.
# tests/unit/test_query_names.py checks the tables cover the enums and name real files.
MERGE_QUERY: Mapping[str, str] = {NodeKind.MEMORY: "merge_memories",
                                  NodeKind.USER_INPUT: "merge_user_inputs"}
MERGE_STEP_QUERY: Mapping[StepType, str] = {
    StepType.MEMORY_READ: "merge_step_memory_read",
    StepType.CLAIM: "merge_step_claim",
    StepType.PLAN: "merge_step_plan",
    StepType.TOOL_ACTION: "merge_step_tool_action",
    StepType.TOOL_OBSERVATION: "merge_step_tool_observation",
    StepType.FINAL_ANSWER: "merge_step_final_answer",
    StepType.MEMORY_WRITE: "merge_step_memory_write",
    StepType.MEMORY_DELETE: "merge_step_memory_delete",
    StepType.MEMORY_UPDATE: "merge_step_memory_update",
    StepType.MEMORY_CONSOLIDATE: "merge_step_memory_consolidate",
}
# Into a staging copy every row is new: CREATE, not MERGE (cypher/ingest/create_staged_*).
CREATE_STAGED_QUERY: Mapping[str, str] = {NodeKind.MEMORY: "create_staged_memories",
                                          NodeKind.USER_INPUT: "create_staged_user_inputs"}
CREATE_STAGED_STEP_QUERY: Mapping[StepType, str] = {
    StepType.MEMORY_READ: "create_staged_step_memory_read",
    StepType.CLAIM: "create_staged_step_claim",
    StepType.PLAN: "create_staged_step_plan",
    StepType.TOOL_ACTION: "create_staged_step_tool_action",
    StepType.TOOL_OBSERVATION: "create_staged_step_tool_observation",
    StepType.FINAL_ANSWER: "create_staged_step_final_answer",
    StepType.MEMORY_WRITE: "create_staged_step_memory_write",
    StepType.MEMORY_DELETE: "create_staged_step_memory_delete",
    StepType.MEMORY_UPDATE: "create_staged_step_memory_update",
    StepType.MEMORY_CONSOLIDATE: "create_staged_step_memory_consolidate",
}
CREATE_STAGED_EDGES_QUERY: Mapping[EdgeLabel, str] = {
    EdgeLabel.CHAIN: "create_staged_edges_chain",
    EdgeLabel.CITE: "create_staged_edges_cite",
    EdgeLabel.SUPPORT: "create_staged_edges_support",
    EdgeLabel.PRODUCE: "create_staged_edges_produce",
    EdgeLabel.DELETE: "create_staged_edges_delete",
    EdgeLabel.UPDATE: "create_staged_edges_update",
    EdgeLabel.CONSOLIDATE: "create_staged_edges_consolidate",
    EdgeLabel.SUPERSEDE: "create_staged_edges_supersede",
    EdgeLabel.DERIVE: "create_staged_edges_derive",
    EdgeLabel.INITIATE: "create_staged_edges_initiate",
}


def node_query(props: dict[str, Any]) -> str:
    """The MERGE query for a node row (labels in the pattern; see
    cypher/ingest/merge_step_claim.cypher)."""
    if props["kind"] == NodeKind.STEP:
        return MERGE_STEP_QUERY[props["step_type"]]
    return MERGE_QUERY[props["kind"]]


def staged_node_query(props: dict[str, Any]) -> str:
    """The CREATE query of a node row written into a staging copy (every row is new there:
    cypher/ingest/create_staged_memories.cypher)."""
    if props["kind"] == NodeKind.STEP:
        return CREATE_STAGED_STEP_QUERY[props["step_type"]]
    return CREATE_STAGED_QUERY[props["kind"]]


def staged_edge_query(label: EdgeLabel) -> str:
    """The CREATE query of an edge row of a staging copy: one per relationship type."""
    return CREATE_STAGED_EDGES_QUERY[label]


def group_node_rows(rows: Iterable[dict[str, Any]],
                    query: Callable[[dict[str, Any]], str] = node_query
                    ) -> dict[str, list[dict[str, Any]]]:
    """Node rows grouped by their write query, each group in the given order."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(query(row["props"]), []).append(row)
    return groups


def edge_row(key: str, edge: Edge) -> dict[str, Any]:
    return {"src": node_uid(key, edge.src), "dst": node_uid(key, edge.dst),
            "label": edge.label.value, "sufficient": edge.sufficient}


WARNINGS = "provrepair.warnings"  # the world key of what a reading could not see


def task_props(case: Case, content_hash: str | None, *, complete: bool) -> dict[str, Any]:
    props: dict[str, Any] = {
        "task_id": case.task_id, "domain": case.domain,
        "diagnosed_faults": list(case.diagnosed_faults),
        "tools_json": dumps([t.model_dump(mode="json") for t in case.tools]),
        "world_json": dumps(case.world), "complete": complete,
    }
    if case.world.get(WARNINGS):  # what `provrepair tasks` prints, as live capture writes it
        props["warnings"] = list(case.world[WARNINGS])
    if content_hash is not None:
        props["content_hash"] = content_hash
    if case.memory_namespace is not None:  # the task's scope (repair/plan/scope.py)
        props["memory_namespace"] = case.memory_namespace
    return props


# -- graph → records ---------------------------------------------------------------------

# Graph bookkeeping, not case fields: keys, ordering, and what repair runs record.
_NODE_ONLY = {"uid", "task_key", "id", "kind", "position", "ts", "status_before", "status_run",
              "status_recorded", "committed"}


def record_from_props(props: dict[str, Any]) -> UserInput | MemoryRecord | ExecutionStep:
    """Rebuild the case record a node row came from."""
    fields = {k: v for k, v in props.items() if k not in _NODE_ONLY}
    kind = props["kind"]
    if kind == NodeKind.USER_INPUT:
        return UserInput.model_validate({"input_id": props["id"], **fields})
    if kind == NodeKind.MEMORY:
        # Required-but-nullable fields were left out of the node when null.
        fields.setdefault("last_modified_by", None)
        fields.setdefault("supersedes", None)
        exact = fields.pop("trust_score_json", None)
        if exact is not None:
            fields["trust_score"] = json.loads(exact)
        return MemoryRecord.model_validate({"memory_id": props["id"], **fields})
    for name in JSON_FIELDS:
        raw = fields.pop(f"{name}_json", None)
        if raw is not None:
            fields[name] = json.loads(raw)
    return ExecutionStep.model_validate({"step_id": props["id"], **fields})


def tools_from_props(props: dict[str, Any]) -> list[ToolSpec]:
    return [ToolSpec.model_validate(t) for t in json.loads(props.get("tools_json", "[]"))]
