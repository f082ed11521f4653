"""`provrepair db check`: is every stored element readable? One line of verdict.

Phase 1 scans every label and relationship type of the vocabulary without reading an
attribute: a label scan that returns a node not carrying the label is a stray entry (FalkorDB
4.16 left one behind when a deletion reached its node through an index while the label's
matrix lagged the graph's capacity: docs/engines.md, "Deleting nodes"). Reading such a node's
attributes fails or crashes the server, so phase 2 (every node's and relationship's
attributes read, label by label) runs only on a store phase 1 found clean. Any statement
failing is damage too, named by its label or type where the engine says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from provrepair.provenance.errors import ProvrepairError
from provrepair.provenance.store.base import GraphStore


@dataclass
class CheckReport:
    clean: bool = True
    reason: str = ""
    nodes: int = 0          # label entries scanned (a node with two labels counts twice)
    relationships: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    types: dict[str, int] = field(default_factory=dict)

    def damaged(self, reason: str) -> CheckReport:
        self.clean, self.reason = False, reason
        return self

    def line(self) -> str:
        if not self.clean:
            return f"damaged: {self.reason}"
        return (f"clean: {sum(self.labels.values()):,} label entries under {len(self.labels)} "
                f"labels and {self.relationships:,} relationships under {len(self.types)} types, "
                "every attribute readable")

    def to_json(self) -> dict[str, Any]:
        return {"clean": self.clean, "reason": self.reason or None, "labels": self.labels,
                "relationship_types": self.types, "relationships": self.relationships}


def check_store(store: GraphStore) -> CheckReport:
    report = CheckReport()
    try:
        for query, key in (("scan_labels", "label"), ("scan_eval_records", "label"),
                           ("scan_relationships", "type")):
            for row in store.run(query, {}):
                scanned, stray = int(row["scanned"]), int(row["stray"] or 0)
                if key == "label":
                    report.labels[row[key]] = scanned
                else:
                    report.types[row[key]] = scanned
                if stray:
                    what = f":{row[key]}" if key == "label" else f"[:{row[key]}]"
                    return report.damaged(
                        f"{stray} of {scanned} {what} entries are stray (deleted elements "
                        "the engine still lists); attributes were not read. Restore the data "
                        "folder from a backup, or re-ingest the tasks into a fresh store")
        for query in ("read_node_properties", "read_eval_records",
                      "read_relationship_properties"):
            store.run(query, {})
    except ProvrepairError as exc:
        return report.damaged(f"a scan failed: {str(exc).splitlines()[0]}")
    report.nodes = sum(report.labels.values())
    report.relationships = sum(report.types.values())
    return report
