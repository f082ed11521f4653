"""`--budget` is never passed: checked before each request against the largest one so far
(the `openai` reasoner over real HTTP against the test double, tests/openai_double.py)."""

from __future__ import annotations

import json

import openai

from provrepair.repair.derive import Context
from provrepair.repair.reasoners.base import StepRequest
from provrepair.repair.reasoners.openai_reasoner import OpenAIReasoner
from tests.helpers import example_case
from tests.openai_double import ChatDouble, Reply


def test_a_request_that_would_pass_the_budget_is_not_sent() -> None:
    case = example_case()
    answer = next(s for s in case.trace if s.step_type == "final_answer")
    request = StepRequest(step=answer, domain=case.domain, context=Context([]),
                          inputs=case.session, memories=[], steps=[])
    double = ChatDouble(respond=lambda body: Reply(json.dumps({"content": "ok",
                                                              "cited_ids": []}), tokens=50))
    client = openai.OpenAI(api_key="test", base_url=double.start(), max_retries=0)
    try:
        brain = OpenAIReasoner(client, "double-model", budget=120)
        outputs = [brain.regenerate(request) for _ in range(4)]
    finally:
        double.stop()
    assert [o.content for o in outputs] == ["ok", "ok", None, None]
    assert len(double.requests) == 2 and brain.usage()["total_tokens"] == 100  # not 150
    assert brain.exhausted == "--budget of 120 tokens: 100 used, and a request takes up to 50"
    assert outputs[2].unresolved == f"the reasoner's limit stopped it: {brain.exhausted}"
