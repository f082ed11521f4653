"""Tools with real, countable side effects, for the call-log tests: a refund, an audit entry
and an email. Each effect appends one line to the file named by PROVREPAIR_TEST_EFFECTS (a
test counts them).

`TOOLS` declares them irreversible (`repair --tools tests.side_effect_tools:TOOLS`).
`KEYED` also says the refund accepts an idempotency key in `request_id`, which it honours as
a payment API does: a request id it has seen makes no second refund, it answers the first
one again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from provrepair.repair.tools.base import ToolResult
from provrepair.repair.tools.declared import ToolSet


def made(path: Path, tool: str | None = None) -> list[dict[str, Any]]:
    """The effects the tools made (of one tool), in order."""
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [r for r in rows if tool is None or r["tool"] == tool]


def _effect(tool: str, request_id: str | None = None, **args: str) -> int:
    """Make the effect (once per request id) and return its number among the tool's."""
    path = Path(os.environ["PROVREPAIR_TEST_EFFECTS"])
    rows = made(path, tool)
    index = next((i for i, r in enumerate(rows)
                  if request_id is not None and r["request_id"] == request_id), None)
    if index is not None:
        return index + 1
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"tool": tool, "request_id": request_id, **args}) + "\n")
    return len(rows) + 1


def refund(order_id: str, amount: str, request_id: str | None = None) -> ToolResult:
    refund_id = f"R-{_effect('issue_refund', request_id, order_id=order_id, amount=amount)}"
    return ToolResult(f"Refunded {amount} for {order_id} ({refund_id})",
                      [{"entity_id": refund_id, "fact_key": "amount", "fact_value": amount},
                       {"entity_id": order_id, "fact_key": "refund_id",
                        "fact_value": refund_id}])


def log_audit(order_id: str, amount: str) -> str:
    number = _effect("log_audit", order_id=order_id, amount=amount)
    return f"Audit entry A-{number}: refund {amount} for {order_id}"


def send_email(to: str, body: str) -> str:
    return f"Email E-{_effect('send_email', to=to, body=body)} sent to {to}"


TOOLS = (ToolSet().add(refund, "irreversible", name="issue_refund")
         .add(log_audit, "irreversible").add(send_email, "irreversible"))
KEYED = ToolSet().update(TOOLS).declare("issue_refund", "irreversible",
                                        idempotency_key="request_id")
