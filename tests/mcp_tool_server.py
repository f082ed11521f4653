"""The test agent's tools, served over MCP stdio with the official `mcp` server SDK:
`get_price` (read-only), `place_order` (an order placed: irreversible; a request carrying an
idempotency key it has seen places no second order, as a payment API does) and `send_email`
(irreversible). Every call is appended to the JSON-lines file named by
PROVREPAIR_TEST_MCP_LOG, with `effect`: whether it acted (a test counts orders and emails).
Run: `python -m tests.mcp_tool_server`.
"""

from __future__ import annotations

import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

PRICES = {"StoreA": "$68.50", "StoreB": "$74.99", "StoreC": "$63.99"}
server = MCPServer("shop-tools")


def logged(tool: str, args: dict[str, Any], effect: bool = False) -> None:
    path = os.environ.get("PROVREPAIR_TEST_MCP_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"tool": tool, "args": args, "effect": effect}) + "\n")


def seen_key(key: str) -> bool:
    path = os.environ.get("PROVREPAIR_TEST_MCP_LOG")
    if not path or not os.path.exists(path):
        return False
    with open(path, encoding="utf-8") as handle:
        return any(json.loads(line)["args"].get("idempotency_key") == key for line in handle)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def get_price(store: str) -> str:
    """The store's price of the P0199 headset."""
    logged("get_price", {"store": store})
    if store not in PRICES:
        raise ValueError(f"no such store: {store}")
    return f"{store}: {PRICES[store]}"


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def place_order(store: str, idempotency_key: str | None = None) -> str:
    """Order the P0199 headset at the store (charges the user's card)."""
    again = idempotency_key is not None and seen_key(idempotency_key)
    logged("place_order", {"store": store, **({"idempotency_key": idempotency_key}
                                              if idempotency_key else {})}, effect=not again)
    return f"order placed at {store} ({PRICES.get(store, '?')})"


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def send_email(to: str, body: str) -> str:
    """Send an email."""
    logged("send_email", {"to": to, "body": body}, effect=True)
    return f"email sent to {to}: {body}"


if __name__ == "__main__":
    server.run()
