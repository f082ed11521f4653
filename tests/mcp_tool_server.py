"""The test agent's tools, served over MCP stdio with the official `mcp` server SDK:
`get_price` (read-only) and `place_order` (an order placed: irreversible). Every call is
appended to the JSON-lines file named by PROVREPAIR_TEST_MCP_LOG, so a test sees which calls
really reached the server. Run: `python -m tests.mcp_tool_server`.
"""

from __future__ import annotations

import json
import os

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

PRICES = {"StoreA": "$68.50", "StoreB": "$74.99", "StoreC": "$63.99"}
server = MCPServer("shop-tools")


def logged(tool: str, args: dict[str, str]) -> None:
    path = os.environ.get("PROVREPAIR_TEST_MCP_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"tool": tool, "args": args}) + "\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def get_price(store: str) -> str:
    """The store's price of the P0199 headset."""
    logged("get_price", {"store": store})
    if store not in PRICES:
        raise ValueError(f"no such store: {store}")
    return f"{store}: {PRICES[store]}"


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def place_order(store: str) -> str:
    """Order the P0199 headset at the store (charges the user's card)."""
    logged("place_order", {"store": store})
    return f"order placed at {store} ({PRICES.get(store, '?')})"


if __name__ == "__main__":
    server.run()
