"""Builders for small valid cases used across tests (pure data, no database)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from provrepair.provenance.models import Case
from provrepair.provenance.validate import parse_case

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "shopping_poisoned_price.json"


def example_raw() -> dict[str, Any]:
    raw: dict[str, Any] = json.loads(EXAMPLE.read_text())
    return raw


def retask(raw: dict[str, Any], task_id: str) -> dict[str, Any]:
    """A deep copy of a raw case under another task id."""
    out = copy.deepcopy(raw)
    out["task_id"] = task_id
    for section in ("session", "memory_store", "trace"):
        for record in out[section]:
            record["task_id"] = task_id
    return out


def example_case(task_id: str | None = None) -> Case:
    raw = example_raw()
    return parse_case(retask(raw, task_id) if task_id else raw)


def canonical(case: Case) -> str:
    return json.dumps(case.model_dump(mode="json"), sort_keys=True)
