"""Baseline "LLM-judge repair" (docs/method.md, Baselines; paper App. G; notes §5, §9 A12).

The paper (paraphrased): an LLM predicts the rollback plan as JSON from a compact view of the
failed run; invalid plans are retried with the error, a case without a valid plan fails, and
valid plans run through the same executor. Departure: none known; it needs an LLM endpoint
and is reported "not run" offline.

The LLM writes the rollback plan as JSON from a compact view of the failed run
(llm_judge_prompt.py); the reply is validated and, when invalid, sent back with the error.
At most `attempts` calls (default 3: two retries; docs/method.md, Choices); an API error or timeout counts
as an attempt. When no valid plan comes back the case is FAILED: a no-op plan is applied
(nothing changes, the recorded answer stands) and the decision is logged as failed, which
the benchmark scores as not recovered. A valid plan is executed by the shared executor:
observations named for replay are refreshed through their generating actions, and the
observations of replayed actions are withheld from preservation until refreshed.

Needs an LLM: with any reasoner other than `openai` it raises MethodNotRun (the benchmark
reports "not run"; it is never silently skipped or faked). Decision calls and tokens are
returned with the plan (`Planned.decision`; paper: L^decision).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from provrepair.benchmark.methods.common import build_plan
from provrepair.benchmark.methods.llm_judge_prompt import JudgePlan, messages, validate
from provrepair.repair.methods.base import Decision, MethodBase, MethodContext, MethodNotRun, Planned

if TYPE_CHECKING:  # the openai SDK takes seconds to import: only when this method runs
    from provrepair.repair.reasoners.openai_reasoner import OpenAIReasoner

ATTEMPTS = 3


class LLMJudge(MethodBase):
    name = "llm_judge"
    description = "baseline: an LLM writes the plan JSON (validated, retried); needs --reasoner openai"

    def __init__(self, attempts: int = ATTEMPTS):
        self.attempts = attempts

    def plan(self, ctx: MethodContext) -> Planned:
        from provrepair.repair.reasoners.openai_reasoner import OpenAIReasoner

        if not isinstance(ctx.reasoner, OpenAIReasoner):
            raise MethodNotRun(f"{self.name} needs an LLM to write the plan: use --reasoner openai "
                               f"(OPENAI_API_KEY, OPENAI_BASE_URL); reasoner "
                               f"{getattr(ctx.reasoner, 'name', '?')!r} cannot")
        decision = Decision()
        judged = self._ask(ctx, ctx.reasoner, decision)
        if judged is None:
            return Planned(build_plan(ctx.case, task_id=ctx.task_id), decision)
        return Planned(build_plan(
            ctx.case, task_id=ctx.task_id, replay=judged.replay_step_ids,
            delete=judged.delete_memory_ids, quarantine=judged.quarantine_memory_ids,
            invalidate=judged.invalidate_claim_ids, suspicious=judged.suspicious_step_ids,
            preserve=judged.preserve_step_ids), decision)

    def _ask(self, ctx: MethodContext, llm: OpenAIReasoner, decision: Decision) -> JudgePlan | None:
        import openai

        chat: list[dict[str, Any]] = messages(ctx.case, ctx.fault_ids)
        for _ in range(self.attempts):
            decision.llm_calls += 1
            decision.regenerations += 1
            try:
                reply = llm.client.chat.completions.create(  # type: ignore[call-overload]
                    model=llm.model, messages=chat, response_format={"type": "json_object"},
                    temperature=0)
            except (openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError) as exc:
                decision.notes.append(f"attempt failed: {type(exc).__name__}")
                continue
            decision.tokens += reply.usage.total_tokens if reply.usage else 0
            text = reply.choices[0].message.content or ""
            try:
                return validate(text, ctx.case, ctx.fault_ids)
            except ValueError as exc:
                decision.notes.append(f"invalid plan: {exc}")
                chat = [*chat, {"role": "assistant", "content": text},
                        {"role": "user", "content": f"Invalid plan: {exc}. Answer again with a "
                         "valid JSON plan."}]
        decision.failed = True
        decision.notes.append(f"no valid plan after {self.attempts} attempts: case failed")
        return None
