"""The `openai` reasoner: the official client against any OpenAI-compatible endpoint.

Outputs must be strict JSON matching the prompt contract (repair/reasoners/prompts.py);
every cited id must be visible in the repaired context. An invalid reply (bad JSON, wrong
shape, an invented or withheld id) is sent back with the error and retried, at most
`attempts` calls; a timeout counts as an attempt. Calls and tokens are counted. When no
attempt succeeds the step is unresolved (never filled from the old step).
"""

from __future__ import annotations

import json
import os
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


class OpenAIReasoner:
    name = "openai"

    def __init__(self, client: openai.OpenAI, model: str, *, attempts: int = 3):
        self.client, self.model, self.attempts = client, model, attempts

    @classmethod
    def from_env(cls, model: str | None = None, timeout: float = 60.0) -> OpenAIReasoner:
        key = os.environ.get("OPENAI_API_KEY")
        if not key:
            raise ConfigError("--reasoner openai needs OPENAI_API_KEY (and OPENAI_BASE_URL for "
                              "an endpoint other than OpenAI's)")
        client = openai.OpenAI(api_key=key, base_url=os.environ.get("OPENAI_BASE_URL"),
                               timeout=timeout, max_retries=0)
        return cls(client, model or os.environ.get("OPENAI_MODEL", "gpt-4o"))

    def regenerate(self, request: StepRequest) -> StepOutput:
        contract = contract_for(request.step.step_type)
        chat = messages(request, contract)
        calls = tokens = 0
        error = "no attempt made"
        for _ in range(self.attempts):
            calls += 1
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
            tokens += reply.usage.total_tokens if reply.usage else 0
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
        failed = unresolved(f"no valid reply after {calls} attempts ({error})")
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
