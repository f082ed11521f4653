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
from typing import Any

from provrepair.provenance.edges import Edge, NodeKind
from provrepair.provenance.keys import node_uid
from provrepair.provenance.models import Case, ExecutionStep, MemoryRecord, ToolSpec, UserInput

JSON_FIELDS = ("tool_args", "facts", "derivation")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _node(key: str, node_id: str, task_id: str, kind: str, position: int, ts: int,
          fields: dict[str, Any]) -> dict[str, Any]:
    props = {k: v for k, v in fields.items() if v is not None}
    props.update(task_key=key, task_id=task_id, id=node_id, kind=kind, position=position, ts=ts)
    return {"uid": node_uid(key, node_id), "props": props}


def input_row(key: str, record: UserInput, position: int) -> dict[str, Any]:
    fields = record.model_dump(mode="json", exclude={"input_id", "task_id"})
    return _node(key, record.input_id, record.task_id, NodeKind.USER_INPUT, position,
                 record.timestamp, fields)


def memory_row(key: str, record: MemoryRecord, position: int) -> dict[str, Any]:
    fields = record.model_dump(mode="json", exclude={"memory_id", "task_id", "fault_type"})
    if record.trust_score is not None:
        fields["trust_score_json"] = dumps(record.trust_score)
    return _node(key, record.memory_id, record.task_id, NodeKind.MEMORY, position,
                 record.created_at, fields)


def step_row(key: str, record: ExecutionStep, position: int) -> dict[str, Any]:
    fields = record.model_dump(mode="json", exclude={"step_id", "task_id", *JSON_FIELDS})
    for name in JSON_FIELDS:
        value = getattr(record, name)
        if value is not None:
            dumped = [f.model_dump(mode="json") for f in value] if name == "facts" else value
            fields[f"{name}_json"] = dumps(dumped)
    return _node(key, record.step_id, record.task_id, NodeKind.STEP, position,
                 record.timestamp, fields)


def node_query(props: dict[str, Any]) -> str:
    """The write query for a node row: one per kind, and one per step type (labels cannot be
    parameters, and must sit in the MERGE pattern; see cypher/ingest/merge_step_claim.cypher)."""
    if props["kind"] == NodeKind.STEP:
        return f"merge_step_{props['step_type']}"
    return "merge_memories" if props["kind"] == NodeKind.MEMORY else "merge_user_inputs"


def group_node_rows(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Node rows grouped by their write query, each group in the given order."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(node_query(row["props"]), []).append(row)
    return groups


def edge_row(key: str, edge: Edge) -> dict[str, Any]:
    return {"src": node_uid(key, edge.src), "dst": node_uid(key, edge.dst),
            "label": edge.label.value, "sufficient": edge.sufficient}


def task_props(case: Case, content_hash: str | None, *, complete: bool) -> dict[str, Any]:
    props: dict[str, Any] = {
        "task_id": case.task_id, "domain": case.domain,
        "diagnosed_faults": list(case.diagnosed_faults),
        "tools_json": dumps([t.model_dump(mode="json") for t in case.tools]),
        "world_json": dumps(case.world), "complete": complete,
    }
    if content_hash is not None:
        props["content_hash"] = content_hash
    return props


# -- graph → records ---------------------------------------------------------------------

# Graph bookkeeping, not case fields: keys, ordering, and what repair runs record.
_NODE_ONLY = {"uid", "task_key", "id", "kind", "position", "ts", "status_before", "status_run",
              "committed"}


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
