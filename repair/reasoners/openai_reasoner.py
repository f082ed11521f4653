"""The `openai` reasoner: the official client against any OpenAI-compatible endpoint.

Outputs must be strict JSON matching the prompt contract (repair/reasoners/prompts.py);
every cited id must be visible in the repaired context. An invalid reply (bad JSON, wrong
shape, an invented or withheld id) is sent back with the error and retried, at most
`attempts` calls; a timeout counts as an attempt. Calls and tokens are counted. When no
attempt succeeds the step is unresolved (never filled from the old step).

`max_calls` and `budget` (total tokens) bound one reasoner's use, checked before each request:
none is sent once the calls are used up, or when the tokens used plus the largest request so
far would pass the budget (a request costs about what the largest one did: the prompt grows
with the replay). Every step still to regenerate is then unresolved, saying so (the repair
ends `partial`; `repair --continue` finishes it later). `usage()` is what the run records:
model, prompt contract (name and digest of its text), calls and tokens. Long texts in a
prompt are cut with a marker (repair/reasoners/prompts.py); the stored values stay whole.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from typing import Any

import openai
from pydantic import ValidationError

from provrepair.provenance.errors import ConfigError
from provrepair.provenance.models import Fact
from provrepair.repair.derive import ToolCall
from provrepair.repair.reasoners.base import StepOutput, StepRequest, unresolved
from provrepair.repair.reasoners.prompts import (
    CONTRACTS,
    ContentReplay,
    MemoryReplay,
    ToolActionReplay,
    contract_for,
    messages,
)

# The prompt contracts' text, as one digest: a run records which prompts produced it.
CONTRACT_DIGEST = hashlib.sha256(json.dumps(
    {name: text for name, (_, text) in sorted(CONTRACTS.items())}).encode()).hexdigest()[:12]


class OpenAIReasoner:
    name = "openai"

    def __init__(self, client: openai.OpenAI, model: str, *, attempts: int = 3,
                 max_calls: int | None = None, budget: int | None = None):
        self.client, self.model, self.attempts = client, model, attempts
        self.max_calls, self.budget = max_calls, budget
        self.calls = self.prompt_tokens = self.completion_tokens = 0
        self.largest = 0  # the most tokens one request took
        self.contracts: Counter[str] = Counter()
        self.exhausted: str | None = None

    @classmethod
    def from_env(cls, model: str | None = None, timeout: float = 60.0, *,
                 max_calls: int | None = None, budget: int | None = None) -> OpenAIReasoner:
        key = os.environ.get("OPENAI_API_KEY")
        if not key:
            raise ConfigError("--reasoner openai needs OPENAI_API_KEY (and OPENAI_BASE_URL for "
                              "an endpoint other than OpenAI's)")
        for option, value in (("--max-calls", max_calls), ("--budget", budget)):
            if value is not None and value < 1:
                raise ConfigError(f"{option} must be at least 1, not {value}")
        client = openai.OpenAI(api_key=key, base_url=os.environ.get("OPENAI_BASE_URL"),
                               timeout=timeout, max_retries=0)
        return cls(client, model or os.environ.get("OPENAI_MODEL", "gpt-4o"),
                   max_calls=max_calls, budget=budget)

    def usage(self) -> dict[str, Any]:
        """What the run records of this reasoner's use."""
        return {"reasoner": self.name, "model": self.model,
                "prompt_contract": f"replay/{CONTRACT_DIGEST}",
                "contracts": dict(sorted(self.contracts.items())), "calls": self.calls,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "total_tokens": self.prompt_tokens + self.completion_tokens,
                "max_calls": self.max_calls, "budget": self.budget, "exhausted": self.exhausted}

    def _limit_reached(self) -> str | None:
        """Why no further request may be sent, if one may not (checked before each)."""
        used = self.prompt_tokens + self.completion_tokens
        if self.max_calls is not None and self.calls >= self.max_calls:
            self.exhausted = f"--max-calls {self.max_calls} reached"
        elif self.budget is not None and used >= self.budget:
            self.exhausted = f"--budget of {self.budget} tokens used"
        elif self.budget is not None and used + self.largest > self.budget:
            self.exhausted = (f"--budget of {self.budget} tokens: {used} used, and a request "
                              f"takes up to {self.largest}")
        return self.exhausted

    def regenerate(self, request: StepRequest) -> StepOutput:
        contract = contract_for(request.step.step_type)
        chat = messages(request, contract)
        calls = tokens = 0
        error = "no attempt made"
        for _ in range(self.attempts):
            limit = self._limit_reached()
            if limit is not None:
                error = f"the reasoner's limit stopped it: {limit}"
                break
            calls += 1
            self.calls += 1
            self.contracts[contract] += 1
            try:
                reply = self.client.chat.completions.create(  # type: ignore[call-overload]
                    model=self.model, messages=chat, response_format={"type": "json_object"},
                    temperature=0)
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                error = f"{type(exc).__name__}: {exc}"
                continue
            except openai.APIStatusError as exc:
                error = f"endpoint answered {exc.status_code}"
                continue
            if reply.usage:
                tokens += reply.usage.total_tokens
                self.prompt_tokens += reply.usage.prompt_tokens
                self.completion_tokens += reply.usage.completion_tokens
                self.largest = max(self.largest, reply.usage.total_tokens)
            text = reply.choices[0].message.content or ""
            try:
                output = self._parse(contract, text, request)
            except ValueError as exc:
                error = str(exc)
                chat = [*chat, {"role": "assistant", "content": text},
                        {"role": "user", "content": f"Invalid reply: {error}. Answer again "
                         "with valid JSON following the contract."}]
                continue
            output.llm_calls, output.tokens = calls, tokens
            return output
        failed = unresolved(error if self.exhausted and calls == 0 else
                            f"no valid reply after {calls} attempts ({error})")
        failed.llm_calls, failed.tokens = calls, tokens
        return failed

    def _parse(self, contract: str, text: str, request: StepRequest) -> StepOutput:
        model = CONTRACTS[contract][0]
        try:
            parsed = model.model_validate(json.loads(text))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise ValueError(f"not the contract's JSON: {str(exc).splitlines()[0]}") from exc
        visible = request.visible_ids()
        invented = [i for i in parsed.cited_ids if i not in visible]  # type: ignore[attr-defined]
        if invented:
            raise ValueError(f"cited ids not visible in the repaired context: {invented}")
        return _output(parsed, request)


def _output(parsed: Any, request: StepRequest) -> StepOutput:
    if isinstance(parsed, ToolActionReplay):
        call = ToolCall(parsed.tool_name, parsed.tool_args)
        return StepOutput(content=call.content(), cited_ids=parsed.cited_ids, tool_call=call)
    assert isinstance(parsed, (ContentReplay, MemoryReplay))
    facts = [Fact.model_validate(f.model_dump()) for f in parsed.facts] or request.step.facts
    return StepOutput(content=parsed.content, cited_ids=parsed.cited_ids,
                      facts=facts if parsed.facts else None)
