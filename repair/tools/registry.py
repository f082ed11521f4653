"""Tools the agent may call, with the ToolSpec contract (docs/case-format.md, "ToolSpec").

A tool is resolved, in order, from the case's recorded environment (`world.tool_results`:
a call whose tool and args match returns that result and those facts; identical repeated
calls to a stateful tool take matching entries in order) and from the domain pack of the
case's domain. Replay re-issues read-only tools freely; a side-effecting tool only when it
is idempotent or after its compensating tool ran; otherwise `SideEffectRefused` is raised
and the repair stops before that step, needing a human.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from provrepair.provenance.errors import UserError
from provrepair.provenance.models import Fact, ToolSpec

DomainTool = Callable[[dict[str, Any], dict[str, Any]], "ToolResult"]  # (args, world) → result


@dataclass(frozen=True)
class ToolResult:
    result: str
    facts: list[dict[str, Any]] = field(default_factory=list)
    status: str = "ok"          # ok | error


class SideEffectRefused(UserError):
    """Replaying this tool call could repeat a side effect; a human must decide."""


class ToolCallRejected(Exception):
    """A tool could not run with the arguments it was given (other argument names, missing
    values). Not a crash: the replayed step becomes unresolved with this reason."""


class ToolRegistry:
    """The tools of one task: specs from the case, implementations from world and packs."""

    def __init__(self, specs: list[ToolSpec], world: Mapping[str, Any],
                 pack: Mapping[str, DomainTool] | None = None,
                 approved: frozenset[str] = frozenset()):
        """`approved`: step ids whose side-effecting call a person allowed to re-issue
        (`repair --resume --approve STEP`)."""
        self.specs = {s.name: s for s in specs}
        self.approved = approved
        self.world = dict(world)
        self.pack = dict(pack or {})
        self._cursor: dict[str, int] = defaultdict(int)
        self.calls = 0

    def spec(self, tool: str) -> ToolSpec:
        """A tool without a spec is assumed read-only (what recorded traces contain)."""
        return self.specs.get(tool) or ToolSpec(name=tool, side_effect=False, compensate=None,
                                                idempotent=True)

    def check_replayable(self, tool: str, step_id: str) -> str | None:
        """None if the call may be re-issued; else the name of the compensating tool to run
        first; raises SideEffectRefused when neither is possible."""
        spec = self.spec(tool)
        if not spec.side_effect or spec.idempotent or step_id in self.approved:
            return None
        if spec.compensate:
            return spec.compensate
        raise SideEffectRefused(
            f"step {step_id!r} calls {tool!r}, which has side effects and is neither idempotent "
            "nor compensable: replaying it could repeat the effect; a human must decide")

    def call(self, tool: str, args: dict[str, Any]) -> ToolResult:
        self.calls += 1
        recorded = self._recorded(tool, args)
        if recorded is not None:
            return recorded
        if tool in self.pack:
            return _checked(tool, args, lambda: self.pack[tool](args, self.world))
        return ToolResult(f"no result available for {tool} with {args}", [], "error")

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
