"""The agent's tools served by an MCP server over stdio (tests/mcp_tool_server.py, a process
the ToolSet starts): declared classes win, annotations are trusted only when asked, a failing
call and a server that cannot start are ToolFailed, and a closed ToolSet starts the server
again for the next repair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provrepair.repair.tools.declared import ToolSet, spec_of
from provrepair.repair.tools.registry import ToolFailed, ToolRegistry, ToolUnavailable
from tests import mcp_agent


def test_mcp_server_tools_over_stdio(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    tools = ToolSet().add_mcp(mcp_agent.server_command(), {"get_price": "read_only"},
                              env=mcp_agent.server_env(log))
    trusting = ToolSet().add_mcp(mcp_agent.server_command(), env=mcp_agent.server_env(log),
                                 trust_annotations=True)
    try:
        registry = ToolRegistry([], {}, declared=tools)
        assert registry.call("get_price", {"store": "StoreC"}).result == "StoreC: $63.99"
        with pytest.raises(ToolFailed, match="get_price failed on the MCP server"):
            registry.call("get_price", {"store": "Nowhere"})
        assert registry.side_effect("place_order") is None  # its hint is not trusted
        assert trusting.spec("get_price") == spec_of("get_price", "read_only")
        assert trusting.spec("place_order") is None  # destructive: stays irreversible
        tools.close()  # a ToolSet serves one repair after another: the server starts again
        assert registry.call("get_price", {"store": "StoreA"}).result == "StoreA: $68.50"
        assert [json.loads(line)["args"]["store"] for line in log.read_text().splitlines()] \
            == ["StoreC", "Nowhere", "StoreA"]
    finally:
        tools.close()
        trusting.close()
    broken = ToolSet().add_mcp(["/nonexistent/mcp-server"], {"x": "read_only"}, timeout=20)
    with pytest.raises(ToolUnavailable, match="is not running"):  # nothing was sent
        ToolRegistry([], {}, declared=broken).call("x", {})
    broken.close()
