"""The 'Rejected input' rules of docs/case-format.md, applied whole-case or one record at a time.

`parse_case` turns raw JSON data into a `Case` (pydantic errors mapped to `CaseError`), then
`validate_case` runs the cross-record rules through `CaseValidator`, the same object the live
recorder feeds event by event. Every error names the task, the field and the offending id.

Choices where the spec is silent (kept here so users and tests see one place):
- every record's `task_id` must equal the case's `task_id`;
- strings may not contain NUL or unpaired surrogates: the embedded engine cannot store NUL
  (its protocol ends the query there) and neither can be UTF-8 encoded, so both engines
  reject them alike instead of one silently truncating;
- a reference whose target is not yet known is held pending (the live recorder sees forward
  references such as `next_step_ids`) and reported by `finish()` if it never resolves.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from provrepair.provenance.bulk_validate import plainly_valid, unordered_steps
from provrepair.provenance.edges import NodeKind
from provrepair.provenance.errors import MAX_REPORTED_ERRORS, CaseError
from provrepair.provenance.models import FORMAT, Case, ExecutionStep, MemoryRecord, UserInput
from provrepair.provenance.parsing import check_storable_text, parse_event, parse_model

ANY_KIND = frozenset({NodeKind.USER_INPUT, NodeKind.MEMORY, NodeKind.STEP})
STEP = frozenset({NodeKind.STEP})
MEMORY = frozenset({NodeKind.MEMORY})
INPUT_OR_STEP = frozenset({NodeKind.USER_INPUT, NodeKind.STEP})


@dataclass(frozen=True)
class Reference:
    field: str          # e.g. "trace[3].used_ids"
    owner: str          # the id of the record holding the reference
    target: str         # the referenced id
    allowed: frozenset[str]


def step_references(step: ExecutionStep, where: str) -> Iterator[Reference]:
    sid = step.step_id
    for name, ids, allowed in (
        ("used_ids", step.used_ids, ANY_KIND),
        ("prev_step_ids", step.prev_step_ids, STEP),
        ("next_step_ids", step.next_step_ids, STEP),
        ("generated_memory_ids", step.generated_memory_ids, MEMORY),
        ("invalidated_memory_ids", step.invalidated_memory_ids, MEMORY),
    ):
        for target in ids:
            yield Reference(f"{where}.{name}", sid, target, allowed)


def memory_references(memory: MemoryRecord, where: str) -> Iterator[Reference]:
    mid = memory.memory_id
    for target in memory.derived_from:
        yield Reference(f"{where}.derived_from", mid, target, MEMORY)
    if memory.supersedes is not None:
        yield Reference(f"{where}.supersedes", mid, memory.supersedes, MEMORY)
    if memory.last_modified_by is not None:
        yield Reference(f"{where}.last_modified_by", mid, memory.last_modified_by, INPUT_OR_STEP)


def _kind_names(kinds: frozenset[str]) -> str:
    names = {NodeKind.USER_INPUT: "a user input", NodeKind.MEMORY: "a memory",
             NodeKind.STEP: "a step"}
    return " or ".join(names[k] for k in sorted(kinds))


class CaseValidator:
    """Cross-record rules for one task, fed record by record (batch or live)."""

    def __init__(self, task_id: str, *, check_cycles_per_step: bool = True):
        check_task_id(task_id)
        self.task_id = task_id
        self.kinds: dict[str, str] = {}
        self.pending: list[Reference] = []
        self.chain_out: dict[str, set[str]] = defaultdict(set)
        self.check_cycles_per_step = check_cycles_per_step

    def error(self, field: str, offending: str | None, problem: str) -> CaseError:
        return CaseError(self.task_id, field, offending, problem)

    # Each add_* checks everything first and changes state last, so a rejected record
    # (a live event) leaves the validator exactly as it was.

    def add_input(self, user_input: UserInput, where: str = "session") -> None:
        self._check_new(user_input.input_id, user_input.task_id, "input_id", where)
        self.kinds[user_input.input_id] = NodeKind.USER_INPUT

    def add_memory(self, memory: MemoryRecord, where: str = "memory") -> None:
        self._subset(memory.sufficient_from, memory.derived_from, f"{where}.sufficient_from",
                     "derived_from", memory.memory_id)
        self._check_new(memory.memory_id, memory.task_id, "memory_id", where)
        pending = self._unresolved(memory_references(memory, where), memory.memory_id, MEMORY)
        self.kinds[memory.memory_id] = NodeKind.MEMORY
        self.pending.extend(pending)

    def add_step(self, step: ExecutionStep, where: str = "step") -> None:
        sid = step.step_id
        self._subset(step.sufficient_ids, step.used_ids, f"{where}.sufficient_ids",
                     "used_ids", sid)
        self._check_new(sid, step.task_id, "step_id", where)
        pending = self._unresolved(step_references(step, where), sid, STEP)
        chain = [(p, sid, f"{where}.prev_step_ids", p) for p in step.prev_step_ids]
        chain += [(sid, n, f"{where}.next_step_ids", n) for n in step.next_step_ids]
        if self.check_cycles_per_step:
            self._check_no_cycle(sid, step.prev_step_ids, step.next_step_ids, where)
        self.kinds[sid] = NodeKind.STEP
        for src, dst, _, _ in chain:
            self.chain_out[src].add(dst)
        self.pending.extend(pending)

    def add_faults(self, memory_ids: Iterable[str], where: str = "diagnosed_faults") -> None:
        refs = [Reference(where, memory_id, memory_id, MEMORY) for memory_id in memory_ids]
        self.pending.extend(self._unresolved(refs, None, None))

    def recheck_memory(self, memory: MemoryRecord, where: str = "memory") -> None:
        """A recorded memory's lifecycle fields changed: check its new last_modified_by."""
        refs = [r for r in memory_references(memory, where) if r.field.endswith("last_modified_by")]
        self.pending.extend(self._unresolved(refs, None, None))

    def finish(self) -> None:
        """Resolve what was pending; raise every reference that never resolved (up to the
        cap) as one CaseError."""
        pending, self.pending = self.pending, []
        errors: list[CaseError] = []
        for ref in pending:
            _collect(errors, self._check_ref, ref, final=True)
        if errors:
            raise CaseError.combined(errors)
        if not self.check_cycles_per_step:
            self._check_acyclic()

    # -- internals -------------------------------------------------------------------------

    def _check_new(self, node_id: str, record_task: str, id_field: str, where: str) -> None:
        if record_task != self.task_id:
            raise self.error(f"{where}.task_id", node_id,
                             f"record belongs to task {record_task!r}, not to this case")
        if node_id in self.kinds:
            raise self.error(f"{where}.{id_field}", node_id,
                             "duplicate id (inputs, memories and steps share one namespace)")

    def _subset(self, part: list[str], whole: list[str], field: str, whole_name: str,
                owner: str) -> None:
        allowed = set(whole)
        for item in part:
            if item not in allowed:
                raise self.error(field, item, f"not in {whole_name} of {owner!r}")

    def _unresolved(self, refs: Iterable[Reference], self_id: str | None,
                    self_kind: frozenset[str] | None) -> list[Reference]:
        """Check references to known ids now; return those still waiting for their target."""
        waiting = []
        for ref in refs:
            if self_id is not None and ref.target == self_id and self_kind is not None:
                self._check_kind(ref, next(iter(self_kind)))
            elif not self._check_ref(ref, final=False):
                waiting.append(ref)
        return waiting

    def _check_ref(self, ref: Reference, *, final: bool) -> bool:
        kind = self.kinds.get(ref.target)
        if kind is None:
            if final:
                raise self.error(ref.field, ref.target,
                                 f"names nothing in the case (referenced by {ref.owner!r})")
            return False
        self._check_kind(ref, kind)
        return True

    def _check_kind(self, ref: Reference, kind: str) -> None:
        if kind not in ref.allowed:
            raise self.error(ref.field, ref.target,
                             f"names {_kind_names(frozenset({kind}))}, expected "
                             f"{_kind_names(ref.allowed)} (referenced by {ref.owner!r})")

    def _check_no_cycle(self, sid: str, prevs: list[str], nexts: list[str], where: str) -> None:
        """Adding sid with edges prev→sid→next closes a cycle iff some next reaches some prev."""
        for other, field in [(p, "prev_step_ids") for p in prevs] + [(n, "next_step_ids") for n in nexts]:
            if other == sid:
                raise self.error(f"{where}.{field}", other, "a step cannot chain to itself")
        targets = set(prevs)
        for nxt in nexts:
            if nxt in targets or any(self._reaches(nxt, p) for p in targets):
                raise self.error(f"{where}.next_step_ids", nxt,
                                 f"CHAIN cycle through {sid!r} and {nxt!r}")

    def _reaches(self, start: str, goal: str) -> bool:
        seen, todo = {start}, [start]
        while todo:
            for nxt in self.chain_out.get(todo.pop(), ()):
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    def _check_acyclic(self) -> None:
        """Kahn's algorithm over all CHAIN edges (the batch path checks cycles once)."""
        remaining = unordered_steps(self.chain_out)
        if remaining:
            cycle = self._find_cycle(remaining)
            raise self.error("trace.prev_step_ids/next_step_ids", cycle[0],
                             f"CHAIN cycle {' -> '.join(map(repr, [*cycle, cycle[0]]))}")

    def _find_cycle(self, remaining: set[str]) -> list[str]:
        """One cycle among the steps Kahn's algorithm could not order (all lie on or after
        a cycle): walk successors within them until a step repeats."""
        remaining = set(remaining)
        while True:  # drop steps downstream of the cycle: they have no successor left
            tails = {n for n in remaining if not self.chain_out.get(n, set()) & remaining}
            if not tails:
                break
            remaining -= tails
        path: list[str] = []
        seen: dict[str, int] = {}
        node = min(remaining)
        while node not in seen:
            seen[node] = len(path)
            path.append(node)
            node = min(n for n in self.chain_out[node] if n in remaining)
        return path[seen[node]:]


def check_task_id(task_id: str) -> None:
    """A task id names the task in every command: an empty (or blank) one is refused."""
    if not task_id.strip():
        raise CaseError(None, "task_id", None, f"must not be empty, got {task_id!r}")


def validate_case(case: Case) -> Case:
    """Run every cross-record rule on a parsed case; returns it unchanged when valid, else
    raises one CaseError carrying the errors of every record (up to MAX_REPORTED_ERRORS).
    A valid case is recognised by set operations (bulk_validate.py); only a case that fails
    them is walked record by record, which locates every error."""
    if plainly_valid(case):
        return case
    return locate_case_errors(case)


def locate_case_errors(case: Case) -> Case:
    """The record-by-record check of validate_case: raises the located CaseError (returns
    the case if, after all, nothing is wrong)."""
    validator = CaseValidator(case.task_id, check_cycles_per_step=False)
    errors: list[CaseError] = []
    for i, user_input in enumerate(case.session):
        _collect(errors, validator.add_input, user_input, f"session[{i}]")
    for i, memory in enumerate(case.memory_store):
        _collect(errors, validator.add_memory, memory, f"memory_store[{i}]")
    for i, step in enumerate(case.trace):
        _collect(errors, validator.add_step, step, f"trace[{i}]")
    _collect(errors, validator.add_faults, case.diagnosed_faults)
    if not errors:  # pending references only mean something once every record is in
        _collect(errors, validator.finish)
    if errors:
        raise CaseError.combined(errors)
    return case


def _collect(errors: list[CaseError], check: Callable[..., object], *args: Any,
             **kwargs: Any) -> None:
    """Run one check, keeping its error and going on (up to the cap)."""
    if len(errors) >= MAX_REPORTED_ERRORS:
        return
    try:
        check(*args, **kwargs)
    except CaseError as exc:
        errors.append(exc)


def require_faults(case_task: str, faults: list[str]) -> None:
    """Repairing needs a non-empty F (docs/method.md §4)."""
    if not faults:
        raise CaseError(case_task, "diagnosed_faults", None, "empty: there is nothing to repair")


MUTABLE_MEMORY_FIELDS = frozenset({"status", "last_modified_by", "last_modified_at",
                                   "trust_score"})


def check_lifecycle_change(validator: CaseValidator, old: MemoryRecord, new: MemoryRecord) -> None:
    """A memory recorded again (live) may change only its lifecycle fields, as an agent's
    store does when a later step retires it; its new last_modified_by must resolve."""
    changed = {k for k in MemoryRecord.model_fields if getattr(old, k) != getattr(new, k)}
    frozen = sorted(changed - MUTABLE_MEMORY_FIELDS)
    if frozen:
        raise CaseError(validator.task_id, f"memory.{frozen[0]}", new.memory_id,
                        "cannot change once recorded (only lifecycle fields may)")
    if "last_modified_by" in changed and new.last_modified_by is not None:
        validator.recheck_memory(new)


# -- raw data → a valid case ----------------------------------------------------------------

def parse_case(raw: Any) -> Case:
    """Raw JSON data → a valid Case, or CaseError naming task, field and id."""
    if not isinstance(raw, dict):
        raise CaseError(None, "(top level)", None, f"a case is a JSON object, got {type(raw).__name__}")
    task = raw.get("task_id") if isinstance(raw.get("task_id"), str) else None
    if raw.get("format") != FORMAT:
        raise CaseError(task, "format", None,
                        f"expected {FORMAT!r}, got {raw.get('format')!r}")
    check_storable_text(raw, task)
    case = parse_model(Case, raw, task)
    check_task_id(case.task_id)
    return validate_case(case)


__all__ = ["CaseValidator", "check_lifecycle_change", "check_storable_text", "parse_case",
           "parse_event", "parse_model", "validate_case"]
