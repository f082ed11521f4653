"""Derivations (docs/case-format.md, "Derivations"): recompute a step's value from the repaired
context alone. Pure functions over a `Context`; no database, no access to the faulty trace's
values, the clean trace or the evaluation block.

An unresolvable value raises `Unresolved`: the step is then recorded as unresolved and the
answer lacks the fact (an honest failure), never filled from elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from provrepair.provenance.models import ExecutionStep, MemoryRecord
from provrepair.provenance.vocab import MUTATION_STEP_TYPES, StepType

NUMERIC_NOISE = re.compile(r"[\s$€£¥,]")


class Unresolved(Exception):
    """A derivation could not be computed from the visible context."""


@dataclass(frozen=True)
class FactSource:
    """One visible fact: from an active memory or from a visible step's `facts`."""

    entity_id: str
    fact_key: str
    value: Any
    ts: int
    from_step: bool       # on equal ts a step's fact beats a memory's
    position: int         # then the later trace position wins
    source_id: str

    def newness(self) -> tuple[int, bool, int]:
        return (self.ts, self.from_step, self.position)


@dataclass(frozen=True)
class ToolCall:
    tool: str
    args: dict[str, Any]

    def content(self) -> str:
        """`tool(k=v, ...)` with keys sorted (docs/case-format.md)."""
        return f"{self.tool}({', '.join(f'{k}={_show(self.args[k])}' for k in sorted(self.args))})"


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True)


DomainFunction = Callable[[dict[str, Any], "Context"], Any]


def visible_facts(memories: Iterable[tuple[MemoryRecord, int]],
                  steps: Iterable[tuple[ExecutionStep, int]]) -> list[FactSource]:
    """The facts a step sees (docs/case-format.md, Derivations, "Visible context"): those of the
    visible active memories, and the `facts` of visible earlier steps other than memory
    mutations (a mutation's facts live on in the records it wrote) and failed observations.
    Callers pass what is visible, each with its position (for "later trace position wins")."""
    facts = [FactSource(m.entity_id, m.fact_key, m.fact_value, m.created_at, False, pos,
                        m.memory_id)
             for m, pos in memories if m.entity_id and m.fact_key and m.fact_value is not None]
    for s, pos in steps:
        if s.step_type in MUTATION_STEP_TYPES or not s.facts:
            continue
        if s.step_type is StepType.TOOL_OBSERVATION and s.status != "ok":
            continue
        facts += [FactSource(f.entity_id, f.fact_key, f.fact_value, s.timestamp, True, pos,
                             s.step_id) for f in s.facts]
    return facts


@dataclass
class Context:
    """What a step may see: facts (newest wins) and, for `scope: cited`, its cited ids."""

    facts: list[FactSource]
    cited: frozenset[str] = frozenset()
    functions: Mapping[str, DomainFunction] = field(default_factory=dict)
    touched: list[str] = field(default_factory=list)  # sources the lookups used, in order

    def lookup(self, entity_id: str, fact_key: str, *, scope: str | None = None) -> Any:
        """The newest visible value. `scope`: "cited" — only from the step's cited ids;
        "memory_first" — from memory when an active memory holds the fact, else from the
        conversation (earlier steps' facts): an agent answering from what it saved, falling
        back to what was said."""
        matches = [f for f in self.facts if f.entity_id == entity_id and f.fact_key == fact_key
                   and (scope != "cited" or f.source_id in self.cited)]
        matches = _scoped(matches, scope)
        if not matches:
            raise Unresolved(f"no visible value for {entity_id}.{fact_key}")
        best = max(matches, key=FactSource.newness)
        if best.source_id not in self.touched:
            self.touched.append(best.source_id)
        return best.value

    def entities_with(self, fact_key: str, *, scope: str | None = None) -> list[str]:
        keyed = _scoped([f for f in self.facts if f.fact_key == fact_key], scope)
        return sorted({f.entity_id for f in keyed})


def _scoped(facts: list[FactSource], scope: str | None) -> list[FactSource]:
    """`memory_first`: the memories' facts when there are any, else the steps'."""
    if scope == "memory_first":
        return [f for f in facts if not f.from_step] or facts
    return facts


def is_derivation(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("fn"), str) and set(value) <= {"fn", "args"}


def evaluate(expr: Any, ctx: Context) -> Any:
    """Value of a derivation (or of a literal, recursively through lists and objects)."""
    if is_derivation(expr):
        args = expr.get("args") or {}
        fn = expr["fn"]
        if fn in BUILTINS:
            return BUILTINS[fn](args, ctx)
        if fn in ctx.functions:
            return ctx.functions[fn]({k: evaluate(v, ctx) for k, v in args.items()}, ctx)
        raise Unresolved(f"unknown derivation function {fn!r}")
    if isinstance(expr, list):
        return [evaluate(v, ctx) for v in expr]
    if isinstance(expr, dict):
        return {k: evaluate(v, ctx) for k, v in expr.items()}
    return expr


def _lookup(args: dict[str, Any], ctx: Context) -> Any:
    entity, key = evaluate(args.get("entity_id"), ctx), evaluate(args.get("fact_key"), ctx)
    return ctx.lookup(str(entity), str(key), scope=args.get("scope"))


def as_number(value: Any) -> float:
    if isinstance(value, bool):
        raise Unresolved(f"{value!r} is not numeric")
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(NUMERIC_NOISE.sub("", str(value)))
    except ValueError:
        raise Unresolved(f"{value!r} is not numeric") from None


def _extreme(pick: Callable[[Iterable[tuple[float, int, str]]], tuple[float, int, str]]) -> Callable[
        [dict[str, Any], Context], str]:
    def run(args: dict[str, Any], ctx: Context) -> str:
        key, scope = str(evaluate(args.get("fact_key"), ctx)), args.get("scope")
        listed = evaluate(args.get("entities"), ctx)
        entities = [str(e) for e in listed] if listed is not None else \
            ctx.entities_with(key, scope=scope)
        if not entities:
            raise Unresolved(f"no visible entity has {key}")
        # Ties go to the first listed (or smallest id): the index is the tie-breaker.
        scored = [(as_number(ctx.lookup(e, key, scope=scope)), i, e)
                  for i, e in enumerate(entities)]
        return pick(scored)[2]
    return run


def _template(args: dict[str, Any], ctx: Context) -> str:
    text = str(args.get("text", ""))
    for name, expr in (args.get("bind") or {}).items():
        text = text.replace("{" + name + "}", _show(evaluate(expr, ctx)))
    return text


def _tool_call(args: dict[str, Any], ctx: Context) -> ToolCall:
    return ToolCall(str(evaluate(args.get("tool"), ctx)), evaluate(args.get("args") or {}, ctx))


BUILTINS: dict[str, Callable[[dict[str, Any], Context], Any]] = {
    "lookup": _lookup,
    "argmin": _extreme(lambda scored: min(scored, key=lambda s: (s[0], s[1]))),
    "argmax": _extreme(lambda scored: min(scored, key=lambda s: (-s[0], s[1]))),
    "template": _template,
    "tool_call": _tool_call,
}
