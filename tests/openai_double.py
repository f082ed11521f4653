"""A TEST DOUBLE of an OpenAI-compatible chat-completions endpoint (not a mock of our code).

It serves POST /v1/chat/completions over real HTTP on 127.0.0.1 so the real `openai` client is
exercised over the wire, and POST /v1/embeddings with the deterministic vectors of
tests/embedding.py (for a library that embeds through an OpenAI-compatible endpoint, as mem0
does; those requests are counted in `embedded`, not kept in `requests`). Replies come from a
script, in order, or from `respond`, a function of the request body (a stand-in model that
reads the prompt it is sent); every request body is kept for assertions. A scripted reply may
delay (to provoke client timeouts) or fail with a status.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str = ""
    delay: float = 0.0
    status: int = 200
    tokens: int = 50
    tool_calls: list[dict[str, Any]] | None = None  # OpenAI `tool_calls` of the message


@dataclass
class ChatDouble:
    script: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    respond: Callable[[dict[str, Any]], Reply] | None = None
    embedded: int = 0

    def start(self) -> str:
        double = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.endswith("/embeddings"):
                    double.embedded += 1
                    self._send(200, embeddings(body))
                    return
                double.requests.append(body)
                reply = (double.respond(body) if double.respond is not None else
                         double.script.pop(0) if double.script else Reply(status=500))
                time.sleep(reply.delay)
                if reply.status != 200:
                    self._send(reply.status, {"error": {"message": "scripted failure"}})
                    return
                self._send(200, {
                    "id": "chatcmpl-double", "object": "chat.completion", "created": 0,
                    "model": body.get("model", "double"),
                    "choices": [{"index": 0,
                                 "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                                 "message": {"role": "assistant",
                                             "content": None if reply.tool_calls else reply.content,
                                             **({"tool_calls": reply.tool_calls}
                                                if reply.tool_calls else {})}}],
                    "usage": {"prompt_tokens": reply.tokens - 10, "completion_tokens": 10,
                              "total_tokens": reply.tokens}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def embeddings(body: dict[str, Any]) -> dict[str, Any]:
    """An embeddings response: one vector of tests/embedding.py per input text."""
    from tests.embedding import embed

    texts = [body["input"]] if isinstance(body["input"], str) else list(body["input"])
    return {"object": "list", "model": body.get("model", "double-embed"),
            "data": [{"object": "embedding", "index": i, "embedding": vector}
                     for i, vector in enumerate(embed(texts))],
            "usage": {"prompt_tokens": 1, "total_tokens": 1}}
