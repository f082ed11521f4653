"""Running a session script through the agent runtime, cleanly or with faults injected.

`BenchAgent` is the runtime's `Agent` with what a controlled benchmark needs on top:
- memory ids by script slot (each mutation owns fixed slots), so the clean and the faulty run
  of one script give every node the same id and can be diffed id by id;
- named records (scripts refer to `note:P0199:StoreC`, not to ids they cannot know);
- the stale fault: a listed mutation is recorded but does not take effect;
- retrieval returns only records that share a word with the request;
- the values bound into each final answer (the required facts of the clean run).
Poisoned and drifted outputs go through the runtime's own `tamper` hook; wrong-user records
are inserted into the store before the first turn.

An *answerable* session (docs/benchmark.md, the paper's regime) differs in two ways: each
working turn's answer also states, as facts, what the turn saves ("Noted: budget $170"), so
the conversation holds the evidence; and the final question is answered from memory first,
falling back to the conversation (`scope: "memory_first"`) — a method that empties the store
can then still answer from what was said.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from provrepair.benchmark.agent import WORD, Agent, MutationSpec, TurnScript, _words
from provrepair.benchmark.scripts import Mutation, Seed, Session
from provrepair.benchmark.sink import CaseSink
from provrepair.provenance.models import ExecutionStep, Fact, MemoryRecord, UserInput
from provrepair.provenance.state.memory import visible_at
from provrepair.provenance.vocab import MemorySource, MemoryStatus, StepType
from provrepair.repair.derive import Context, Unresolved, _show, evaluate, visible_facts
from provrepair.repair.reasoners.base import StepOutput
from provrepair.repair.reasoners.offline import OfflineReasoner
from provrepair.repair.tools.packs import domain_functions, domain_tools
from provrepair.repair.tools.registry import ToolRegistry

SEED_TS, ROOT_TS = 10, 1
STOPWORDS = frozenset({"a", "an", "and", "are", "at", "be", "by", "did", "do", "for", "from", "i",
                       "in", "is", "it", "me", "my", "of", "on", "or", "so", "that", "the",
                       "their", "them", "this", "to", "was", "what", "which", "with", "you",
                       "your"})


@dataclass(frozen=True)
class Corruption:
    old: str
    new: str

    def apply(self, output: StepOutput) -> StepOutput:
        facts = [f.model_copy(update={"fact_value": self.new}) if f.fact_value == self.old
                 else f for f in output.facts or []]
        content = (output.content or "").replace(self.old, self.new)
        return replace(output, content=content, facts=facts or output.facts)


@dataclass
class Injection:
    """Everything a fault manifest does to one run (see benchmark/inject.py)."""

    corrupt: dict[str, Corruption] = field(default_factory=dict)   # step id → corruption
    failed: set[str] = field(default_factory=set)                  # mutation keys
    renames: dict[str, str] = field(default_factory=dict)          # slot id → faulty id
    roots: list[tuple[str, Seed]] = field(default_factory=list)    # (id, wrong-user record)

    def tamper(self, step: ExecutionStep, output: StepOutput) -> StepOutput:
        corruption = self.corrupt.get(step.step_id)
        return corruption.apply(output) if corruption and output.content else output


@dataclass
class Run:
    sink: CaseSink
    agent: BenchAgent
    answers: list[str | None]

    @property
    def final_values(self) -> list[str]:
        return self.agent.answer_values


class BenchAgent(Agent):
    def __init__(self, sink: CaseSink, session: Session, injection: Injection):
        domain = session.domain
        super().__init__(sink, OfflineReasoner(),
                         ToolRegistry(session.tools, session.world, domain_tools(domain)),
                         domain=domain, functions=domain_functions(domain),
                         tamper=injection.tamper)
        self.injection = injection
        self.names: dict[str, str] = {}
        self.slot = 0
        self.slots: list[str] = []
        self.failing = False
        self.answer_values: list[str] = []
        self.mutation_keys: dict[str, str] = {}    # mutation step id → script key
        self.answerable, self.turn_count = session.answerable, len(session.turns)
        self.stated: list[Fact] = []               # what this turn's answer states (answerable)

    def run_turn(self, turn: int, script: TurnScript) -> str | None:
        if self.answerable and turn == self.turn_count:
            script = replace(script, claim=memory_first(script.claim),
                             answer=memory_first(script.answer))
        self.stated = [f for m in script.mutations for f in m.facts] \
            if self.answerable and turn < self.turn_count else []
        return super().run_turn(turn, script)

    def seed(self, seeds: list[Seed]) -> None:
        for index, (memory_id, root) in enumerate(self.injection.roots):
            self.add_memory(_record(memory_id, root, ROOT_TS + index, self.recorder.task_id,
                                    MemorySource.INJECTED))
        for index, item in enumerate(seeds):
            self.slot += 1
            memory_id = f"m_{self.slot:03d}"
            self.names[item.name] = memory_id
            self.add_memory(_record(memory_id, item, SEED_TS + index, self.recorder.task_id,
                                    item.source))

    # -- overrides ----------------------------------------------------------------------------

    def _memory_read(self, turn: int, user: UserInput, top_k: int) -> ExecutionStep:
        words = set(WORD.findall(user.content.lower())) - STOPWORDS
        scored = sorted(((len(words & _words(m)), m) for m in self.memories.values()
                         if m.status is MemoryStatus.ACTIVE),
                        key=lambda pair: (-pair[0], -pair[1].created_at, pair[1].memory_id))
        hits = [m.memory_id for overlap, m in scored[:top_k] if overlap > 0]
        return self._record(StepType.MEMORY_READ, turn, "Retrieved: " + (", ".join(hits) or
                                                                         "nothing"), hits, [])

    def _mutate(self, turn: int, spec: MutationSpec, user: UserInput) -> None:
        count = 0 if spec.kind == "delete" else max(1, len(spec.facts))
        self.slots = [self._slot_id(self.slot + i + 1) for i in range(count)]
        self.slot += count
        key = spec.key if isinstance(spec, Mutation) else ""
        self.mutation_keys[self._next_step_id()] = key
        self.failing = key in self.injection.failed
        try:
            super()._mutate(turn, replace(spec, targets=[self.names.get(t, t)
                                                         for t in spec.targets]), user)
        finally:
            self.failing = False

    def _new_records(self, spec: MutationSpec, output: StepOutput, step_id: str,
                     targets: list[str], sources: list[str]) -> list[str]:
        if self.failing:
            return []
        ids = super()._new_records(spec, output, step_id, targets, sources)
        for name, memory_id in zip(getattr(spec, "names", []), ids, strict=False):
            self.names[name] = memory_id
        return ids

    def _set_status(self, memory_id: str, status: MemoryStatus, by: str) -> None:
        if not self.failing:
            super()._set_status(memory_id, status, by)

    def _next_memory_id(self) -> str:
        return self.slots.pop(0)

    def _ask(self, template: ExecutionStep) -> tuple[StepOutput, list[str]]:
        if template.step_type is not StepType.FINAL_ANSWER:
            return super()._ask(template)
        self.answer_values = self._bound_values(template)
        if self.stated:
            # The answer states what the turn saves; a fact it cannot state yet is left out.
            resolvable = [f for f in self.stated if self._resolves(f, template)]
            template.facts = resolvable or None
        return super()._ask(template)

    def _resolves(self, fact: Fact, template: ExecutionStep) -> bool:
        if fact.derivation is None:
            return True
        try:
            evaluate(fact.derivation, self._context(template))
        except Unresolved:
            return False
        return True

    def _context(self, template: ExecutionStep) -> Context:
        memories = [(m, i) for i, m in enumerate(self.memories.values())
                    if visible_at(m, template.timestamp)]
        return Context(visible_facts(memories, list(enumerate_steps(self.steps))),
                       frozenset(template.used_ids), self.functions)

    # -- helpers ------------------------------------------------------------------------------

    def _slot_id(self, number: int) -> str:
        memory_id = f"m_{number:03d}"
        return self.injection.renames.get(memory_id, memory_id)

    def _bound_values(self, template: ExecutionStep) -> list[str]:
        """The values the answer's template holes take (the facts that make it right)."""
        derivation = template.derivation or {}
        if derivation.get("fn") != "template":
            return []
        context = self._context(template)
        values = []
        for expr in (derivation["args"].get("bind") or {}).values():
            try:
                values.append(_show(evaluate(expr, context)))
            except Unresolved:  # an unresolved hole contributes no required fact
                continue
        return values


def memory_first(expr: Any) -> Any:
    """The derivation with every lookup, argmin and argmax answering from memory first."""
    if isinstance(expr, list):
        return [memory_first(v) for v in expr]
    if not isinstance(expr, dict):
        return expr
    out = {k: memory_first(v) for k, v in expr.items()}
    if expr.get("fn") in ("lookup", "argmin", "argmax") and isinstance(out.get("args"), dict):
        out["args"] = {**out["args"], "scope": "memory_first"}
    return out


def enumerate_steps(steps: list[ExecutionStep]) -> list[tuple[ExecutionStep, int]]:
    return [(s, i) for i, s in enumerate(steps)]


def _record(memory_id: str, item: Seed, ts: int, task_id: str,
            source: MemorySource) -> MemoryRecord:
    return MemoryRecord(
        memory_id=memory_id, task_id=task_id, content=item.content, source=source,
        last_modified_by=None, created_at=ts, last_modified_at=ts, derived_from=[],
        supersedes=None, status=MemoryStatus.ACTIVE, entity_id=item.entity_id,
        fact_key=item.fact_key, fact_value=item.fact_value)


def run_session(session: Session, task_id: str, injection: Injection | None = None) -> Run:
    """Run every turn of the script; the case is in `run.sink`."""
    sink = CaseSink(task_id, domain=session.domain, tools=session.tools, world=session.world)
    agent = BenchAgent(sink, session, injection or Injection())
    agent.seed(session.seeds)
    answers = [agent.run_turn(turn, script) for turn, script in enumerate(session.turns, 1)]
    return Run(sink, agent, answers)

