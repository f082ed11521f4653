"""What every module of `repair/tools` shares, and nothing else: a tool's result, the ways a
call can fail, a domain tool's signature, a domain pack, and what the registry asks of the
user's declared tools. The other modules import this one and never each other in a circle
(tests/unit/test_layers.py checks it): registry, declared, mcp, packs and domains each build
on it alone (declared starts mcp lazily; packs finds domains by name).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from provrepair.provenance.errors import UserError
from provrepair.provenance.models import ToolSpec


@dataclass(frozen=True)
class ToolResult:
    result: str
    facts: list[dict[str, Any]] = field(default_factory=list)
    status: str = "ok"          # ok | error


DomainTool = Callable[[dict[str, Any], dict[str, Any]], ToolResult]  # (args, world) → result
Runner = Callable[[dict[str, Any]], ToolResult]


class SideEffectRefused(UserError):
    """Replaying this tool call could repeat a side effect; a human must decide."""


class ToolUnavailable(Exception):
    """A call that could not run or failed. Not a crash: the replayed step becomes
    unresolved with this reason."""


class ToolNotSent(ToolUnavailable):
    """Nothing was sent: the call could not be made here."""


class ToolCallRejected(ToolNotSent):
    """A tool could not run with the arguments it was given (other argument names, missing
    values)."""


class NoImplementation(ToolNotSent):
    """Nothing here can run the tool: no declared implementation, recorded result or pack."""


class ToolFailed(ToolUnavailable):
    """The call was made and failed (the tool raised, or answered an error)."""


class ToolOutcomeUnknown(ToolFailed):
    """The call was sent and no answer came (a timeout, a server that died mid-call): it may
    have taken effect."""


class ToolPack(dict[str, DomainTool]):
    """Tool name → implementation, with `specs`: tool name → its declared ToolSpec."""

    def __init__(self, tools: Mapping[str, DomainTool], specs: list[ToolSpec]):
        super().__init__(tools)
        self.specs = {spec.name: spec for spec in specs}
