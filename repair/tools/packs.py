"""Domain tool packs and derivation functions, looked up by a case's `domain`."""

from __future__ import annotations

from collections.abc import Mapping

from repair.replay.derive import DomainFunction
from repair.tools.registry import DomainTool


def domain_tools(domain: str) -> Mapping[str, DomainTool]:
    from repair.tools import domains

    return domains.PACKS.get(domain, {})


def domain_functions(domain: str) -> dict[str, DomainFunction]:
    from repair.tools import domains

    return dict(domains.FUNCTIONS.get(domain, {}))
