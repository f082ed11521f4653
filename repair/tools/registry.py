"""Tools the agent may call, with the ToolSpec contract (docs/case-format.md, "ToolSpec").

A tool's side-effect class comes, in order, from the user's declaration (`ToolSet`,
repair/tools/declared.py), the case's `tools`, and the domain's tool pack; a tool none of
them declares is irreversible. Replay re-issues read-only tools freely; a side-effecting tool
only when it is idempotent or after its compensating tool ran; otherwise `SideEffectRefused`
is raised and the repair stops before that step, needing a human.

A call runs, in order, through the user's implementation (a callable, an MCP server), the
case's recorded environment (`world.tool_results`: a call whose tool and args match returns
that result and those facts; identical repeated calls to a stateful tool take matching entries
in order) and the domain pack. A call none of them can run, or that fails, raises
`ToolUnavailable`: the step is unresolved with that reason, never given a made-up result.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from provrepair.provenance.errors import UserError
from provrepair.provenance.models import Fact, ToolSpec

if TYPE_CHECKING:
    from provrepair.repair.tools.declared import ToolSet

DomainTool = Callable[[dict[str, Any], dict[str, Any]], "ToolResult"]  # (args, world) → result


@dataclass(frozen=True)
class ToolResult:
    result: str
    facts: list[dict[str, Any]] = field(default_factory=list)
    status: str = "ok"          # ok | error


class SideEffectRefused(UserError):
    """Replaying this tool call could repeat a side effect; a human must decide."""


class ToolUnavailable(Exception):
    """A call that could not run or failed. Not a crash: the replayed step becomes
    unresolved with this reason."""


class ToolCallRejected(ToolUnavailable):
    """A tool could not run with the arguments it was given (other argument names, missing
    values)."""


class ToolFailed(ToolUnavailable):
    """The tool ran and failed (raised, answered an error, or its server did not answer)."""


class NoImplementation(ToolUnavailable):
    """Nothing here can run the tool: no declared implementation, recorded result or pack."""


class ToolRegistry:
    """The tools of one task: classes and implementations from the user's declaration, the
    case and the domain pack."""

    def __init__(self, specs: list[ToolSpec], world: Mapping[str, Any],
                 pack: Mapping[str, DomainTool] | None = None,
                 approved: frozenset[str] = frozenset(), declared: ToolSet | None = None):
        """`approved`: step ids whose side-effecting call a person allowed to re-issue
        (`repair --resume --approve STEP`); `declared`: the user's tools (`--tools`)."""
        self.specs = {s.name: s for s in specs}
        self.pack_specs: dict[str, ToolSpec] = dict(getattr(pack, "specs", {}))
        self.approved, self.declared = approved, declared
        self.world = dict(world)
        self.pack = dict(pack or {})
        self._cursor: dict[str, int] = defaultdict(int)
        self.calls = 0

    def spec(self, tool: str) -> ToolSpec | None:
        """The tool's declared class (user, then case, then pack); None: undeclared."""
        declared = self.declared.spec(tool) if self.declared is not None else None
        return declared or self.specs.get(tool) or self.pack_specs.get(tool)

    def available(self) -> list[ToolSpec]:
        """The tools a reasoner may call, each with its class (an undeclared one as
        irreversible): the case's, and the user's declaration, else the domain pack's (a
        simulated domain's tools are not offered to an agent that declared its own)."""
        names = {*self.specs, *(self.declared.names() if self.declared is not None
                                else self.pack_specs)}
        return [self.spec(name) or ToolSpec(name=name, side_effect=True, compensate=None,
                                            idempotent=False) for name in sorted(names)]

    def check_replayable(self, tool: str, step_id: str) -> str | None:
        """None if the call may be re-issued; else the name of the compensating tool to run
        first; raises SideEffectRefused when neither is possible."""
        spec = self.spec(tool)
        if step_id in self.approved or (spec is not None and (not spec.side_effect
                                                               or spec.idempotent)):
            return None
        if spec is not None and spec.compensate:
            return spec.compensate
        why = ("has side effects and is neither idempotent nor compensable" if spec is not None
               else "is not declared, so it counts as irreversible (declare its side-effect "
               "class with --tools if re-issuing it is safe)")
        raise SideEffectRefused(
            f"step {step_id!r} calls {tool!r}, which {why}: replaying it could repeat the "
            "effect; a human must decide")

    def call(self, tool: str, args: dict[str, Any]) -> ToolResult:
        self.calls += 1
        run = self.declared.runner(tool) if self.declared is not None else None
        if run is not None:
            return run(args)
        recorded = self._recorded(tool, args)
        if recorded is not None:
            return recorded
        if tool in self.pack:
            return _checked(tool, args, lambda: self.pack[tool](args, self.world))
        raise NoImplementation(f"{tool} cannot run here: no implementation and no recorded "
                              f"result for {args} (declare the agent's tools with --tools)")

    def _recorded(self, tool: str, args: dict[str, Any]) -> ToolResult | None:
        entries = [e for e in self.world.get("tool_results", [])
                   if e.get("tool") == tool and e.get("args") == args]
        if not entries:
            return None
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
