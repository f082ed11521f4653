"""A refund tool with a real, countable side effect, for the call-log tests: each refund it
makes appends one line to the file named by PROVREPAIR_TEST_EFFECTS (a test counts them).

`TOOLS` declares it irreversible (`repair --tools tests.side_effect_tools:TOOLS`); `KEYED`
also says it accepts an idempotency key in `request_id`, and the tool honours it as a payment
API does: a request id it has seen makes no second refund, it answers the first one again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from provrepair.repair.tools.base import ToolResult
from provrepair.repair.tools.declared import ToolSet


def made(path: Path) -> list[dict[str, Any]]:
    """The refunds the tool made, in order."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def refund(order_id: str, amount: str, request_id: str | None = None) -> ToolResult:
    path = Path(os.environ["PROVREPAIR_TEST_EFFECTS"])
    rows = made(path)
    index = next((i for i, r in enumerate(rows)
                  if request_id is not None and r["request_id"] == request_id), None)
    if index is None:  # a new refund
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"order_id": order_id, "amount": amount,
                                     "request_id": request_id}) + "\n")
        index = len(rows)
    refund_id = f"R-{index + 1}"
    return ToolResult(f"Refunded {amount} for {order_id} ({refund_id})",
                      [{"entity_id": refund_id, "fact_key": "amount", "fact_value": amount},
                       {"entity_id": order_id, "fact_key": "refund_id",
                        "fact_value": refund_id}])


TOOLS = ToolSet().add(refund, "irreversible", name="issue_refund")
KEYED = ToolSet().add(refund, "irreversible", name="issue_refund", idempotency_key="request_id")
