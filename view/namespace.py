"""`provrepair view --namespace NS`: the conversations a fault reached across a shared memory,
on one page (issue 37).

Each reached conversation is a group (a compound node named by its task and time), drawn
with its own graph as `view_data` gives it (coloured by its latest run: the namespace repair's
run of it, else the plan `plan --namespace` recorded), side by side in time order; the
fault's path across them is drawn as `SHARED_RECORD` edges, from a conversation's version of
a record to the next conversation that read it. Node ids are `<task>/<id>`.
"""

from __future__ import annotations

from typing import Any

from provrepair.provenance.state.runs import is_committed_repair
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan.model import NamespacePlan
from provrepair.view.graph import view_data
from provrepair.view.palette import page_palette

GAP = 200.0  # horizontal space between two conversations' graphs
SHARED = "SHARED_RECORD"


def namespace_view_data(store: GraphStore, plan: NamespacePlan) -> dict[str, Any]:
    """One page's data for the reached conversations of `plan` (the same shape as
    `view_data`, with group nodes: `kind` "conversation", members naming it in `parent`)."""
    groups: list[dict[str, Any]] = []
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    repaired = False
    left = 0.0
    for conversation in plan.conversations:
        task = conversation.task_id
        data = view_data(store, task)
        repaired = repaired or bool(data["run"] and is_committed_repair(data["run"]["status"]))
        shift = left - min((n.get("x", 0.0) for n in data["nodes"]), default=0.0)
        groups.append({"id": task, "kind": "conversation", "phase": "both",
                       "label": f"{task} (t={conversation.started_at})",
                       "answer_affected": conversation.answer_affected,
                       "content": conversation.answer or "", "status_before": None,
                       "status_after": None})
        for n in data["nodes"]:
            nodes.append({**n, "id": f"{task}/{n['id']}", "task_id": task, "parent": task,
                          "x": n.get("x", 0.0) + shift})
        edges += [{**e, "src": f"{task}/{e['src']}", "dst": f"{task}/{e['dst']}"}
                  for e in data["edges"]]
        left = max((n["x"] for n in nodes), default=left) + GAP
        for link in conversation.reached_by:
            if link.from_task is not None:
                edges.append({"label": SHARED, "src": f"{link.from_task}/{link.from_memory}",
                              "dst": f"{task}/{link.memory_id}", "phase": "both",
                              "sufficient": False, "record_id": link.record_id})
    return {"task": {"task_id": f"namespace {plan.namespace}", "domain": "",
                     "diagnosed_faults": plan.faults},
            "run": {"run_id": "", "status": None, "method": "namespace", "created": None,
                    "answer": None, "repaired": repaired},
            "palette": page_palette(), "namespace": plan.namespace,
            "affected_answers": [a.model_dump() for a in plan.affected_answers],
            "nodes": groups + nodes, "edges": edges}
