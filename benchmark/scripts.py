"""The vocabulary the benchmark's session scripts are written in: derivation builders, named
memory mutations and the `Session` a domain builder returns.

Derivations are the case format's expression trees (docs/case-format.md, "Derivations"); a script
step carries the same derivation the offline reasoner later replays, so a generated case is
replayable from its repaired context alone.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from provrepair.benchmark.agent import MutationSpec, TurnScript
from provrepair.provenance.models import Fact, ToolSpec
from provrepair.provenance.vocab import MemorySource

Expr = dict[str, Any]


def lookup(entity: Any, key: str) -> Expr:
    return {"fn": "lookup", "args": {"entity_id": entity, "fact_key": key}}


def tpl(text: str, **bind: Any) -> Expr:
    return {"fn": "template", "args": {"text": text, "bind": bind}}


def argmin(key: str, entities: list[str] | None = None) -> Expr:
    return {"fn": "argmin", "args": {"fact_key": key, "entities": entities}}


def argmax(key: str, entities: list[str] | None = None) -> Expr:
    return {"fn": "argmax", "args": {"fact_key": key, "entities": entities}}


def call(tool: str, **args: Any) -> Expr:
    return {"fn": "tool_call", "args": {"tool": tool, "args": args}}


def fn(name: str, **args: Any) -> Expr:
    """A domain function registered in repair/tools/domains.py (e.g. `travel.pick_hotel`)."""
    return {"fn": name, "args": args}


def derived_fact(entity: str, key: str, derivation: Expr) -> Fact:
    """A fact whose value the reasoner recomputes (it can change under a fault)."""
    return Fact(entity_id=entity, fact_key=key, fact_value=None, derivation=derivation)


def const_fact(entity: str, key: str, value: str) -> Fact:
    """A fact stated by the user in this turn: a constant of the step."""
    return Fact(entity_id=entity, fact_key=key, fact_value=value)


@dataclass
class Mutation(MutationSpec):
    """A memory mutation with a session-unique `key` (what a stale fault makes fail) and
    symbolic `names` for the records it writes; `targets` may name records symbolically."""

    key: str = ""
    names: list[str] = field(default_factory=list)


Mutations = list[MutationSpec]


def write(key: str, name: str, text: str, fact: Fact, *,
          source: MemorySource = MemorySource.TOOL_OBSERVATION, **bind: Any) -> Mutation:
    return Mutation("write", tpl(text, **bind), [fact], source=source, key=key, names=[name])


def update(key: str, target: str, name: str, text: str, fact: Fact, *,
           source: MemorySource = MemorySource.USER_INPUT, **bind: Any) -> Mutation:
    return Mutation("update", tpl(text, **bind), [fact], [target], source=source, key=key,
                    names=[name])


def consolidate(key: str, targets: list[str], name: str, text: str, fact: Fact,
                **bind: Any) -> Mutation:
    return Mutation("consolidate", tpl(text, **bind), [fact], list(targets),
                    source=MemorySource.AGENT_SUMMARY, key=key, names=[name])


def delete(key: str, targets: list[str], text: str) -> Mutation:
    return Mutation("delete", tpl(text), [], list(targets), key=key)


def fold(*turns: TurnScript) -> TurnScript:
    """Several requests made in one user turn: the first turn's claim, plan and answer, every
    tool call and every memory mutation, in order."""
    first = turns[0]
    return TurnScript(content=" ".join(t.content for t in turns), claim=first.claim,
                      answer=first.answer, plan=next((t.plan for t in turns if t.plan), None),
                      tool_calls=[c for t in turns for c in t.tool_calls],
                      mutations=[m for t in turns for m in t.mutations], top_k=first.top_k)


def sessions_of(rng: random.Random, work: list[TurnScript], final: TurnScript,
                early: bool) -> list[TurnScript]:
    """2-4 turns: the three working turns as they are, or two of them made in one turn (the
    first two if `early`, else the last two), or all three in one; then the final question."""
    count = rng.choices([4, 3, 2], weights=[6, 3, 1])[0]
    if count == 3:
        work = [fold(*work[:2]), work[2]] if early else [work[0], fold(*work[1:])]
    elif count == 2:
        work = [fold(*work)]
    return [*work, final]


@dataclass(frozen=True)
class Seed:
    """A record in the store before the session starts (profile, earlier notes, filler)."""

    name: str
    content: str
    entity_id: str | None = None
    fact_key: str | None = None
    fact_value: str | None = None
    source: MemorySource = MemorySource.USER_INPUT


@dataclass
class Session:
    """What a domain builder produces: the world, the store before the session, the turns,
    and other users' records a wrong-user fault may insert."""

    domain: str
    world: dict[str, Any]
    tools: list[ToolSpec]
    seeds: list[Seed]
    turns: list[TurnScript]
    strangers: list[Seed] = field(default_factory=list)
    answerable: bool = False  # the final question can fall back to the conversation


def tool(name: str, *, side_effect: bool = False, compensate: str | None = None,
         idempotent: bool = True) -> ToolSpec:
    return ToolSpec(name=name, side_effect=side_effect, compensate=compensate,
                    idempotent=idempotent)
