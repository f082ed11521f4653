"""Reasoners behind one interface (repair.reasoners.base.Reasoner)."""

from __future__ import annotations

from provrepair.repair.reasoners.base import Reasoner


def make_reasoner(name: str, model: str | None = None) -> Reasoner:
    if name == "offline":
        from provrepair.repair.reasoners.offline import OfflineReasoner

        return OfflineReasoner()
    from provrepair.repair.reasoners.openai_reasoner import OpenAIReasoner

    return OpenAIReasoner.from_env(model)
