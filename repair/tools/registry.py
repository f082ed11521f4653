"""Tools the agent may call, with the ToolSpec contract (docs/case-format.md, "ToolSpec").

A tool's side-effect class comes, in order, from the user's declaration (`ToolSet`,
repair/tools/declared.py), the case's `tools`, and the domain's tool pack; a tool none of
them declares is irreversible. Replay re-issues read-only tools freely; a side-effecting tool
only when it is idempotent, after its compensating tool ran, or when a person approved that
very call (repair/tools/calllog.py decides, and logs every call).

A call runs, in order, through the user's implementation (a callable, an MCP server), the
case's recorded environment (`world.tool_results`: a call whose tool and args match returns
that result and those facts; identical repeated calls to a stateful tool take matching entries
in order) and the domain pack. A call none of them can run, or that fails, raises
`ToolUnavailable`: the step is unresolved with that reason, never given a made-up result.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from provrepair.provenance.models import Fact, ToolSpec
from provrepair.repair.tools.base import (
    DomainTool,
    NoImplementation,
    Runner,
    SideEffectRefused,
    ToolCallRejected,
    ToolFailed,
    ToolOutcomeUnknown,
    ToolResult,
    ToolUnavailable,
)
from provrepair.repair.tools.declared import SideEffect, ToolSet, class_of

# the names callers import from here (benchmark/agent.py, plugins)
__all__ = ["DomainTool", "NoImplementation", "SideEffectRefused", "ToolCallRejected",
           "ToolFailed", "ToolOutcomeUnknown", "ToolRegistry", "ToolResult", "ToolUnavailable"]


class ToolRegistry:
    """The tools of one task: classes and implementations from the user's declaration, the
    case and the domain pack."""

    def __init__(self, specs: list[ToolSpec], world: Mapping[str, Any],
                 pack: Mapping[str, DomainTool] | None = None,
                 declared: ToolSet | None = None):
        """`declared`: the user's tools (`--tools`)."""
        self.specs = {s.name: s for s in specs}
        self.pack_specs: dict[str, ToolSpec] = dict(getattr(pack, "specs", {}))
        self.declared = declared
        self.world = dict(world)
        self.pack = dict(pack or {})
        self._cursor: dict[str, int] = defaultdict(int)

    def spec(self, tool: str) -> ToolSpec | None:
        """The tool's declared class (user, then case, then pack); None: undeclared. The
        pack's class is a simulated domain's: never that of the user's own tool of the same
        name (undeclared, it is irreversible)."""
        declared = self.declared.spec(tool) if self.declared is not None else None
        if declared is not None or tool in self.specs:
            return declared or self.specs[tool]
        own = self.declared is not None and self.declared.serves(tool)
        return None if own else self.pack_specs.get(tool)

    def available(self) -> list[ToolSpec]:
        """The tools a reasoner may call, each with its class (an undeclared one as
        irreversible): the case's, and the user's declaration, else the domain pack's (a
        simulated domain's tools are not offered to an agent that declared its own)."""
        names = {*self.specs, *(self.declared.names() if self.declared is not None
                                else self.pack_specs)}
        return [self.spec(name) or ToolSpec(name=name, side_effect=True, compensate=None,
                                            idempotent=False) for name in sorted(names)]

    def side_effect(self, tool: str) -> SideEffect | None:
        """The tool's class; None: nobody declared it (it counts as irreversible)."""
        spec = self.spec(tool)
        return class_of(spec) if spec is not None else None

    def compensation(self, tool: str) -> str | None:
        spec = self.spec(tool)
        return spec.compensate if spec is not None else None

    def idempotency_key(self, tool: str) -> str | None:
        """The argument through which the tool accepts an idempotency key, if it declared one."""
        return self.declared.idempotency_key(tool) if self.declared is not None else None

    def refusal(self, tool: str, step_id: str) -> str:
        """Why re-issuing this call needs a person."""
        if self.spec(tool) is None:
            return (f"{tool} is not declared, so it counts as irreversible (declare its "
                    "side-effect class with --tools if sending it again is safe)")
        return (f"{tool} is irreversible (neither idempotent nor compensable): sending it "
                f"again at {step_id} could repeat its effect")

    def prepare(self, tool: str, args: dict[str, Any]) -> Runner:
        """What will run this call (NoImplementation, before anything is sent, when nothing
        here can): the user's implementation, the recorded environment, the domain pack."""
        run = self.declared.runner(tool) if self.declared is not None else None
        if run is not None:
            return run
        if self._entries(tool, args):
            return lambda given: self._recorded(tool, given)
        if tool in self.pack:
            return lambda given: _checked(tool, given, lambda: self.pack[tool](given, self.world))
        raise NoImplementation(f"{tool} cannot run here: no implementation and no recorded "
                              f"result for {args} (declare the agent's tools with --tools)")

    def acts_in_world(self, tool: str) -> bool:
        """The user's own implementation runs it (a callable, an MCP server): not the case's
        recorded environment or a domain pack, which act on nothing."""
        return self.declared is not None and self.declared.runner(tool) is not None

    def call(self, tool: str, args: dict[str, Any]) -> ToolResult:
        return self.prepare(tool, args)(args)

    def _entries(self, tool: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        return [e for e in self.world.get("tool_results", [])
                if e.get("tool") == tool and e.get("args") == args]

    def _recorded(self, tool: str, args: dict[str, Any]) -> ToolResult:
        entries = self._entries(tool, args)
        key = f"{tool}:{sorted(args.items())!r}"
        entry = entries[min(self._cursor[key], len(entries) - 1)]
        self._cursor[key] += 1
        return ToolResult(str(entry.get("result", "")), list(entry.get("facts", [])),
                          str(entry.get("status", "ok")))


def _checked(tool: str, args: dict[str, Any], run: Callable[[], ToolResult]) -> ToolResult:
    """Run a domain tool; arguments it cannot use, or facts it cannot state from them (an
    entity id missing because the argument had another name), reject the call."""
    try:
        result = run()
        for fact in result.facts:
            Fact.model_validate(fact)
    except (TypeError, KeyError, ValueError, AttributeError) as exc:  # ValidationError too
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ToolCallRejected(f"{tool} cannot run with arguments {sorted(args)}: "
                               f"{reason}") from exc
    return result
