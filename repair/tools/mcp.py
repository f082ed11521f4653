"""The tools of an MCP server, for a repair to re-issue (the `mcp` extra: the official client,
stdio transport).

The client is asynchronous and its session must be entered and left in one task, while the
repair is synchronous: the session lives in one task on its own thread and event loop, and a
call is a request put on its queue, answered through a future. The server starts on first
use (listing its tools) and stops at `close()`; a call that gets no answer within `timeout`
seconds (its outcome is unknown: ToolOutcomeUnknown), a server that cannot start (nothing sent:
ToolNotSent) and a tool result flagged `isError` (ToolFailed) each leave the step unresolved,
never the repair crashed. Output that is not UTF-8 or not JSON-RPC is one clear ToolFailed at
once: the transport decodes with replacement characters (a strict decoder would stop reading
and leave the call waiting for its timeout); a line with such bytes that cannot be parsed
fails the call in flight (other stray lines, a server's log on stdout, are ignored as the
client does), and a result with replacement characters in it is refused.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import threading
from typing import Any

from provrepair.provenance.errors import ConfigError
from provrepair.provenance.models import ToolSpec
from provrepair.repair.tools.base import ToolFailed, ToolNotSent, ToolOutcomeUnknown, ToolResult

_STOP = object()
REPLACEMENT = "\ufffd"  # what the transport decodes a byte that is not UTF-8 to


class McpServer:
    def __init__(self, command: list[str], env: dict[str, str], trust_annotations: bool,
                 timeout: float):
        self.command, self.env = command, env
        self.trust_annotations, self.timeout = trust_annotations, timeout
        self._tools: dict[str, Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[Any] | None = None
        self._thread: threading.Thread | None = None
        self._failed: str | None = None

    def tool_names(self) -> set[str]:
        return set(self._listing())

    def annotated_spec(self, name: str) -> ToolSpec | None:
        """The class the server's annotations give, when the user trusts them."""
        annotations = getattr(self._listing().get(name), "annotations", None)
        if not self.trust_annotations or annotations is None:
            return None
        if annotations.read_only_hint:
            return ToolSpec(name=name, side_effect=False, compensate=None, idempotent=True)
        if annotations.idempotent_hint:
            return ToolSpec(name=name, side_effect=True, compensate=None, idempotent=True)
        return None

    def failure(self) -> str | None:
        """Why the server is not running (it could not start, or it stopped), if it is not."""
        self._listing()
        return self._failed

    def runner(self, name: str) -> Any:
        return lambda args: self.call(name, args)

    def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        self._listing()
        if self._failed is not None or self._loop is None or self._queue is None:
            raise ToolNotSent(f"{name}: the MCP server {self._shown()} is not running "
                              f"({self._failed})")
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (name, args, future))
        try:
            result = future.result(self.timeout)
        except concurrent.futures.TimeoutError:
            raise ToolOutcomeUnknown(f"{name}: no answer from the MCP server within "
                                     f"{self.timeout:g} s") from None
        except ToolFailed:
            raise
        except Exception as exc:
            raise ToolOutcomeUnknown(f"{name}: the MCP call failed: {type(exc).__name__}: "
                                     f"{exc}") from exc
        text = "\n".join(getattr(c, "text", "") for c in result.content if hasattr(c, "text"))
        if not text and result.structured_content is not None:
            text = json.dumps(result.structured_content, ensure_ascii=False)
        if REPLACEMENT in text:
            raise ToolFailed(_undecodable_answer(name, self._shown()))
        if result.is_error:
            raise ToolFailed(f"{name} failed on the MCP server: {text or 'isError'}")
        return ToolResult(text)

    def close(self) -> None:
        """Stop the server; a later call starts it again (a ToolSet serves many repairs)."""
        if self._thread is None:
            return
        if self._loop is not None and self._queue is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._queue.put_nowait, _STOP)
        self._thread.join(self.timeout)
        self._thread, self._tools, self._loop, self._queue, self._failed = (
            None, None, None, None, None)

    # -- the session's own thread ---------------------------------------------------------

    def _listing(self) -> dict[str, Any]:
        if self._tools is None:
            ready: concurrent.futures.Future[dict[str, Any]] = concurrent.futures.Future()
            self._thread = threading.Thread(target=asyncio.run, args=(self._serve(ready),),
                                            name="provrepair-mcp", daemon=True)
            self._thread.start()
            try:
                self._tools = ready.result(self.timeout)
            except Exception as exc:  # it could not start: its tools cannot run
                self._failed = f"{type(exc).__name__}: {exc}"
                self._tools = {}
        return self._tools

    async def _serve(self, ready: concurrent.futures.Future[dict[str, Any]]) -> None:
        try:
            from mcp import Client, StdioServerParameters
        except ImportError:
            ready.set_exception(ConfigError("MCP tools need the mcp extra: pip install "
                                            "'provrepair[mcp]'"))
            return
        params = StdioServerParameters(command=self.command[0], args=self.command[1:],
                                       env=self.env or None, encoding_error_handler="replace")
        unreadable: asyncio.Queue[Exception] = asyncio.Queue()
        # the client logs an unreadable line with its traceback; it is reported here, once
        logging.getLogger("mcp").addHandler(logging.NullHandler())

        async def on_message(message: Any) -> None:
            if isinstance(message, Exception) and _undecodable(message):
                unreadable.put_nowait(message)

        try:
            async with Client(params, read_timeout_seconds=self.timeout,
                              message_handler=on_message) as client:
                listing = await client.list_tools()
                self._loop, self._queue = asyncio.get_running_loop(), asyncio.Queue()
                ready.set_result({tool.name: tool for tool in listing.tools})
                while (item := await self._queue.get()) is not _STOP:
                    name, args, future = item
                    try:
                        future.set_result(await self._answer(client, name, args, unreadable))
                    except Exception as exc:
                        future.set_exception(exc)
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            self._failed = f"{type(exc).__name__}: {exc}"

    async def _answer(self, client: Any, name: str, args: dict[str, Any],
                      unreadable: asyncio.Queue[Exception]) -> Any:
        """The server's answer to one call, or ToolFailed as soon as it writes a line that
        cannot be read (the answer it was meant to be will never come)."""
        while not unreadable.empty():  # written before this call: not its answer
            unreadable.get_nowait()
        call = asyncio.ensure_future(client.call_tool(name, args))
        broken = asyncio.ensure_future(unreadable.get())
        done, _ = await asyncio.wait({call, broken}, return_when=asyncio.FIRST_COMPLETED)
        if call in done:
            broken.cancel()
            return call.result()
        call.cancel()
        raise ToolFailed(_undecodable_answer(name, self._shown()))

    def _shown(self) -> str:
        return " ".join(self.command)


def _undecodable_answer(name: str, server: str) -> str:
    return f"{name}: the MCP server {server} answered bytes that are not UTF-8 (its answer " \
        "cannot be read)"


def _undecodable(error: Exception) -> bool:
    """A line the client could not parse had bytes that are not UTF-8 in it."""
    errors = getattr(error, "errors", None)
    inputs = [e.get("input") for e in errors()] if callable(errors) else []
    return REPLACEMENT in str(error) or any(isinstance(i, str) and REPLACEMENT in i
                                            for i in inputs)
