"""The FalkorDB delete guard and `db check` cover the whole vocabulary (no server needed).

Every query that deletes nodes must scan every node label first (docs/engines.md, "Deleting
nodes"), and `db check` must scan every label and relationship type: a label or type added
to provenance/vocab.py without them fails here.
"""

from __future__ import annotations

import re

from provrepair.provenance.store.queries import load_registry
from provrepair.provenance.vocab import EdgeLabel, NodeLabel, RecordEdge, RepairEdge, RunMark

REGISTRY = load_registry()
GRAPH_LABELS = {label.value for label in NodeLabel} - {NodeLabel.EVAL_RECORD.value}
TYPES = {t.value for t in [*EdgeLabel, *RunMark, *RepairEdge, *RecordEdge]}


SCAN = re.compile(r"OPTIONAL MATCH \((sync\d+):(\w+)\) WITH \1 LIMIT 1")
DELETES = re.compile(r"(?<![:|])\bDELETE\s+\w")  # not the :DELETE relationship type


def code(name: str) -> str:
    return "\n".join(line for line in REGISTRY[name].text.splitlines()
                     if not line.lstrip().startswith("//"))


def scanned_before_delete(name: str) -> set[str]:
    head = DELETES.split(code(name))[0]
    return {label for _, label in SCAN.findall(head)}


def test_every_node_deleting_query_scans_every_label_first() -> None:
    deleting = [name for name in REGISTRY.queries if DELETES.search(code(name))]
    assert {"swap_staged_task", "delete_task", "delete_nodes", "delete_runs",
            "rollback_repair_run", "prune_evaluations"} <= set(deleting)
    for name in deleting:
        assert scanned_before_delete(name) >= GRAPH_LABELS | {"EvalRecord"}, name


def test_db_check_scans_every_label_and_type() -> None:
    def named(query: str, column: str) -> set[str]:
        return set(re.findall(rf"'(\w+)' AS {column}", REGISTRY[query].text))

    assert named("scan_labels", "label") == GRAPH_LABELS
    assert named("read_node_properties", "label") == GRAPH_LABELS
    assert named("scan_relationships", "type") == TYPES
    assert named("read_relationship_properties", "type") == TYPES
    assert named("scan_eval_records", "label") == {"EvalRecord"}
