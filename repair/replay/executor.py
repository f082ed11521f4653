"""Selective replay (docs/method.md §5): walk V_replay in trace order over the repaired
state, regenerating each step with the reasoner, re-issuing tool calls through the registry
and applying memory mutations; early cutoff skips dependents whose replayed inputs came out
unchanged. Pure computation: the write-back (repair/replay/writeback.py) stores the result.

Unresolved propagates: a step that could not be regenerated, a tool call that could not run
or failed (and the observation it would have produced), and every replayed step that uses one
of them is unresolved, with its reason; such a step is never regenerated from, nor re-issued
with, what it recorded (its recorded arguments came from the contaminated run).

Tool calls go through the call log (repair/tools/calllog.py): a call already answered in an
earlier run of the task version is reused, never sent again. A call a person must decide about
(an irreversible or undeclared tool without their approval of that very call, or one that may
have been sent already) is pending: the replay goes on without it, so one stop lists every
pending call the replay reaches (the steps that need a pending call's result wait with it),
and the run stops (`needs_human`) with nothing of the replay written.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from provrepair.provenance.models import Case, ExecutionStep, Fact, MemoryRecord
from provrepair.provenance.order import final_answer_step
from provrepair.provenance.vocab import MUTATION_STEP_TYPES, StepStatus, StepType
from provrepair.repair.derive import DomainFunction
from provrepair.repair.plan.model import RepairPlan
from provrepair.repair.reasoners.base import Reasoner, StepOutput, StepRequest, unresolved
from provrepair.repair.replay.mutations import apply_mutation
from provrepair.repair.replay.prior import PriorOutcome
from provrepair.repair.replay.state import RepairState
from provrepair.repair.tools.base import ToolResult, ToolUnavailable
from provrepair.repair.tools.calllog import CallLog, CallPending, Calls, PendingCall
from provrepair.repair.tools.registry import ToolRegistry


@dataclass
class ReplayResult:
    answer: str | None = None
    # (new step, the old step it replaces, or None for an observation that replaces nothing)
    new_steps: list[tuple[ExecutionStep, str | None]] = field(default_factory=list)
    unresolved: dict[str, str] = field(default_factory=dict)   # old step id → reason
    notes: dict[str, list[str]] = field(default_factory=dict)
    cutoff: list[str] = field(default_factory=list)            # kept by early cutoff
    unchanged: list[str] = field(default_factory=list)         # replayed, same output
    reused: list[str] = field(default_factory=list)            # resolved by an earlier run
    needs_human: dict[str, str] | None = None                  # {step_id, reason}: the first
    pending: list[PendingCall] = field(default_factory=list)   # every call a person must decide
    llm_calls: int = 0
    tokens: int = 0
    tool_calls: int = 0        # calls sent
    reused_calls: int = 0      # calls an earlier run of the version answered, not sent again


class Executor:
    def __init__(self, case: Case, plan: RepairPlan, reasoner: Reasoner, tools: ToolRegistry,
                 tag: str, *, early_cutoff: bool = True,
                 functions: dict[str, DomainFunction] | None = None,
                 stored_ids: Iterable[tuple[str, str]] = (),
                 skipped: frozenset[str] = frozenset(), prior: PriorOutcome | None = None,
                 carried: Iterable[tuple[MemoryRecord, str]] = (),
                 reserved: Iterable[str] = (), calls: Calls | None = None):
        """`prior`: what earlier runs of this task version replayed (a continuation reuses
        what they resolved and regenerates the rest, repair/replay/prior.py). `carried`:
        (record, the record it replaces) that earlier conversations' repairs rewrote in the
        shared memory, read by this one (RepairState.carry); `reserved`: ids the records it
        writes may not take (the shared memory's other conversations use them); `calls`: the
        gate to the task's call log (without one, an in-memory log: nothing is written)."""
        self.case, self.plan, self.reasoner, self.tools = case, plan, reasoner, tools
        self.calls = calls or Calls(tools, CallLog(None, case.task_id, tag))
        self.state = RepairState(case, plan, tag, stored_ids)
        self.prior = prior
        for record, replaces in prior.memories if prior is not None else ():
            self.state.memories[record.memory_id] = record
            if replaces is not None:
                self.state.memory_remap[replaces] = record.memory_id
        # actions a person chose not to re-issue (--resume --skip, now or at an earlier resume)
        self.skipped = skipped | self.calls.log.skipped_steps()
        self.state.taken.update(reserved)
        for record, replaces in carried:
            self.state.carry(record, replaces)
        self.early_cutoff, self.functions = early_cutoff, functions or {}
        self.result = ReplayResult()
        final = final_answer_step(case)
        self.final_id = final.step_id if final is not None else None
        self.must_replay = set(plan.seeds.values()) | ({self.final_id} if self.final_id else set())

    def run(self) -> ReplayResult:
        self.state.apply_dispositions()
        for step_id in self.plan.replay_step_ids:
            step = self.state.original[step_id]
            if self.prior is not None and self._reuse(step, self.prior):
                self.result.reused.append(step_id)
                continue
            if self.early_cutoff and self._cut(step):
                self.result.cutoff.append(step_id)
                # kept as it was, with the observations it generated (they stay valid)
                self.state.visible.update([step_id, *(o.step_id for o in self._observations(step))])
                continue
            self._replay(step)
        if self.result.pending:
            first = self.result.pending[0]
            self.result.needs_human = {"step_id": first.step_id, "reason": first.reason}
        self.result.tool_calls, self.result.reused_calls = self.calls.sent, self.calls.reused
        if self.final_id is not None and self.final_id not in self.plan.replay_step_ids:
            # not regenerated (a method that replays nothing): the recorded answer stands
            self.result.answer = self.state.original[self.final_id].content
        return self.result

    # -- one step -----------------------------------------------------------------------------

    def _reuse(self, step: ExecutionStep, prior: PriorOutcome) -> bool:
        """Take an earlier run's outcome for this step, unless that run left it unresolved."""
        if step.step_id in prior.redo:
            return False
        observations = self._observations(step)
        reused = prior.reused(step.step_id)
        if reused is None:  # the earlier run kept it as it was (early cutoff): so does this one
            self.state.visible.update([step.step_id, *(o.step_id for o in observations)])
            return True
        self.state.replace(step.step_id, reused)
        for old in observations:
            if (replacement := prior.reused(old.step_id)) is not None:
                self.state.replace(old.step_id, replacement)
        for added in prior.added:
            if reused.step_id in added.prev_step_ids:
                self.state.add(added, after=step.step_id)
        if step.step_id == self.final_id:
            self.result.answer = reused.content
        return True

    def _replay(self, step: ExecutionStep) -> None:
        if step.step_type is StepType.MEMORY_READ:
            self._memory_read(step)
            return
        blocked = self._unresolved_input(step)
        output = unresolved(f"its input {blocked} is unresolved") if blocked is not None \
            else self.reasoner.regenerate(self._request(step))
        self.result.llm_calls += output.llm_calls
        self.result.tokens += output.tokens
        if output.notes:
            self.result.notes[step.step_id] = output.notes
        if output.content is None:
            self.result.unresolved[step.step_id] = output.unresolved or "unresolved"
        new = self._new_step(step, output)
        if step.step_type is StepType.TOOL_ACTION:
            if output.tool_call is not None:
                self._issue_tool_call(step, new, output)
            else:  # not issued: what it observed is gone, and unresolved too
                self._record(step, new, same=False)
                self._observe(step, new, None, same_call=False)
            return
        if step.step_type in MUTATION_STEP_TYPES and output.content is not None:
            new = apply_mutation(self.state, step, new, output)
        self._record(step, new, same=self._same(step, new))
        if step.step_id == self.final_id:
            self.result.answer = output.content

    def _request(self, step: ExecutionStep) -> StepRequest:
        here = self.state.position[step.step_id]
        hint = step.model_copy(update={"used_ids": self.state.remap(step.used_ids)})
        return StepRequest(
            step=hint, domain=self.case.domain,
            context=self.state.context(step, hint.used_ids, self.functions),
            inputs=self.state.inputs(step.timestamp),
            memories=self.state.visible_memories(step.timestamp),
            steps=self.state.visible_steps(here), tools=self.tools.available())

    def _new_step(self, step: ExecutionStep, output: StepOutput) -> ExecutionStep:
        cited = self.state.remap(output.cited_ids)
        content = output.content if output.content is not None else \
            f"(unresolved: {output.unresolved or 'no value'})"
        call = output.tool_call
        return step.model_copy(update={
            "step_id": self.state.new_step_id(step.step_id), "content": content,
            "used_ids": cited, "sufficient_ids": [i for i in step.sufficient_ids if i in cited],
            "prev_step_ids": self.state.remap(step.prev_step_ids), "next_step_ids": [],
            "generated_memory_ids": [], "invalidated_memory_ids": [],
            "facts": output.facts if output.content is not None else None,
            "tool_name": call.tool if call else step.tool_name,
            "tool_args": call.args if call else step.tool_args})

    def _memory_read(self, step: ExecutionStep) -> None:
        """Re-run retrieval on the repaired store: the same reads, remapped to what is active
        now (a removed record drops out, a regenerated one takes its place)."""
        used = self.state.remap(step.used_ids)
        new = step.model_copy(update={
            "step_id": self.state.new_step_id(step.step_id), "used_ids": used,
            "sufficient_ids": [i for i in step.sufficient_ids if i in used],
            "prev_step_ids": self.state.remap(step.prev_step_ids), "next_step_ids": [],
            "content": "Retrieved: " + (", ".join(used) if used else "nothing")})
        self._record(step, new, same=used == step.used_ids)

    def _issue_tool_call(self, step: ExecutionStep, new: ExecutionStep, output: StepOutput) -> None:
        call = output.tool_call
        assert call is not None
        if step.step_id in self.skipped:  # a person decided: not re-issued, not pretended
            self.result.unresolved[step.step_id] = f"{call.tool} not re-issued (--skip)"
            self._record(step, new, same=False)
            self._observe(step, new, None, same_call=False)
            return
        result: ToolResult | None = None
        try:
            result = self.calls.issue(step.step_id, call.tool, call.args,
                                      dict(step.tool_args or {}), step.tool_name)
        except CallPending as exc:  # waits for a person; what needs its result waits too
            self.result.pending.append(exc.call)
            self.result.unresolved[step.step_id] = f"waiting for a person: {exc.call.reason}"
            for old in self._observations(step):
                self.result.unresolved[old.step_id] = f"its action {step.step_id} is waiting"
            return
        except ToolUnavailable as exc:  # the step is unresolved; the repair goes on
            self.result.unresolved[step.step_id] = str(exc)
            new = new.model_copy(update={"content": f"(unresolved: {exc})"})
        same_call = call.tool == step.tool_name and call.args == (step.tool_args or {})
        self._record(step, new, same=same_call and result is not None)
        self._observe(step, new, result, same_call=same_call)

    def _observe(self, step: ExecutionStep, new: ExecutionStep, result: ToolResult | None, *,
                 same_call: bool) -> None:
        """The observation of a replayed action: its new result, or (the call did not run)
        an unresolved placeholder in place of what it observed before."""
        old_obs = self._observations(step)
        if result is None:
            reason = f"its action {step.step_id} is unresolved"
            for old in old_obs:
                self.result.unresolved[old.step_id] = reason
            result = ToolResult(f"(unresolved: {reason})", [], "error")
        template = old_obs[0] if old_obs else step
        observation = template.model_copy(update={
            "step_id": self.state.new_step_id(template.step_id if old_obs else step.step_id + ".obs"),
            "step_type": StepType.TOOL_OBSERVATION, "content": result.result,
            "used_ids": [new.step_id], "sufficient_ids": [], "prev_step_ids": [new.step_id],
            "next_step_ids": [], "generated_memory_ids": [], "invalidated_memory_ids": [],
            "facts": [Fact.model_validate(f) for f in result.facts], "status": StepStatus(result.status),
            "tool_name": None, "tool_args": None, "derivation": None})
        if old_obs:
            self._record(old_obs[0], observation, same=same_call and
                         result.result == old_obs[0].content)
        elif step.step_id not in self.result.unresolved:
            self.state.add(observation, after=step.step_id)
            self.result.new_steps.append((observation, None))

    def _unresolved_input(self, step: ExecutionStep) -> str | None:
        """The first step this one uses whose replay is unresolved, if any."""
        inputs = [*step.used_ids, *(step.prev_step_ids if step.step_type
                                    is StepType.TOOL_OBSERVATION else [])]
        return next((i for i in inputs if i in self.result.unresolved), None)

    def _observations(self, action: ExecutionStep) -> list[ExecutionStep]:
        """The recorded observations an action generated: those that use it, else (an older
        recording) those that follow it (it is in their prev_step_ids) and use no other
        action. With parallel calls the observations of several actions follow the last of
        them: each belongs to the action it uses, never to the one it merely follows."""
        observations = [s for s in self.case.trace if s.step_type is StepType.TOOL_OBSERVATION]
        using = [s for s in observations if action.step_id in s.used_ids]
        if using:
            return using
        actions = {s.step_id for s in self.case.trace if s.step_type is StepType.TOOL_ACTION}
        return [s for s in observations if action.step_id in s.prev_step_ids
                and not actions & set(s.used_ids)]

    def _record(self, old: ExecutionStep, new: ExecutionStep, *, same: bool) -> None:
        self.state.replace(old.step_id, new)
        self.result.new_steps.append((new, old.step_id))
        if same:
            self.result.unchanged.append(old.step_id)

    @staticmethod
    def _same(old: ExecutionStep, new: ExecutionStep) -> bool:
        return old.content == new.content and (old.facts or []) == (new.facts or [])

    # -- early cutoff -------------------------------------------------------------------------

    def _cut(self, step: ExecutionStep) -> bool:
        """Skip a step all of whose tainted inputs were replayed with unchanged output (it
        would come out the same). The final answer and seeds are always replayed."""
        if step.step_id in self.must_replay:
            return False
        if step.step_type in MUTATION_STEP_TYPES and \
                set(step.generated_memory_ids) & self.state.removed:
            return False  # its records were removed: they must be written anew
        inputs = set(step.used_ids) | set(step.prev_step_ids if step.step_type
                                          is StepType.TOOL_OBSERVATION else [])
        tainted = {i for i in inputs if i in self.state.invalidated or i in self.state.removed
                   or i in self.plan.replay_step_ids}
        unchanged = set(self.result.unchanged) | set(self.result.cutoff)
        return bool(tainted) and tainted <= unchanged
