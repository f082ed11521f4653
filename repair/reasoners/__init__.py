"""Reasoners behind one interface (repair.reasoners.base.Reasoner), named in `REASONERS`.

A name is exact: an unknown one (`make_reasoner("ofline")`) is a ConfigError listing the known
names, whatever the environment holds, so a typo never sends an agent's memories to an
external API. Plugins add reasoners through the `provrepair.reasoners` entry points
(provenance/registry.py); a factory takes `model`, `max_calls` and `budget` as keywords.
"""

from __future__ import annotations

from typing import Any

from provrepair.provenance.registry import Registry
from provrepair.repair.reasoners.base import Reasoner


def _offline(**_limits: Any) -> Reasoner:
    """No model and no calls: `model`, `max_calls` and `budget` do not apply."""
    from provrepair.repair.reasoners.offline import OfflineReasoner

    return OfflineReasoner()


REASONERS: Registry[Reasoner] = Registry("reasoner", {
    "offline": _offline,
    "openai": "provrepair.repair.reasoners.openai_reasoner:OpenAIReasoner.from_env",
})


def make_reasoner(name: str, model: str | None = None, *, max_calls: int | None = None,
                  budget: int | None = None) -> Reasoner:
    """The reasoner registered as `name`; `max_calls`/`budget` (tokens) bound a model's use."""
    return REASONERS.create(name, model=model, max_calls=max_calls, budget=budget)


def as_reasoner(reasoner: Reasoner | str, model: str | None = None, *,
                max_calls: int | None = None, budget: int | None = None) -> Reasoner:
    """What the Python API's repairs take (`run_repair`, `repair_namespace`): a Reasoner as it
    is, or a registered name made into one (`make_reasoner`; an unknown name: ConfigError)."""
    if isinstance(reasoner, str):
        return make_reasoner(reasoner, model, max_calls=max_calls, budget=budget)
    return reasoner
