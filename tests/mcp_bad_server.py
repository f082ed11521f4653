"""An MCP server over stdio that answers its one tool with bytes that are not UTF-8, as a
broken server would (written by hand on raw JSON-RPC: the official SDK cannot send such
bytes). `python -m tests.mcp_bad_server string`: the bad bytes sit inside the result's text;
`... line`: the whole answer line is garbage. Each call is appended to the file named by
PROVREPAIR_TEST_MCP_LOG, so a test sees it reached the server.
"""

from __future__ import annotations

import json
import os
import sys


def answer(message: dict[str, object], mode: str) -> bytes | None:
    ident, method = message.get("id"), message.get("method")
    if ident is None:  # a notification
        return None
    if method == "tools/call":
        log = os.environ.get("PROVREPAIR_TEST_MCP_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(message.get("params")) + "\n")
        if mode == "line":
            return b"\xff\xfe not JSON, not UTF-8\n"
        return (b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":'
                b'"caf\xe9 \xff"}],"isError":false}}\n' % int(str(ident)))
    params = message.get("params") or {}
    assert isinstance(params, dict)
    result = ({"protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}},
               "serverInfo": {"name": "bad-bytes", "version": "1"}} if method == "initialize"
              else {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
              if method == "tools/list" else {})
    return (json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\n").encode()


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "string"
    for raw in sys.stdin.buffer:
        reply = answer(json.loads(raw), mode)
        if reply is not None:
            sys.stdout.buffer.write(reply)
            sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
