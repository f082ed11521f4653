"""Domain tool packs and derivation functions, looked up by a case's `domain`."""

from __future__ import annotations

from collections.abc import Mapping

from provrepair.repair.derive import DomainFunction
from provrepair.repair.tools.registry import DomainTool


def domain_tools(domain: str) -> Mapping[str, DomainTool]:
    from provrepair.repair.tools import domains

    return domains.PACKS.get(domain, {})


def domain_functions(domain: str) -> dict[str, DomainFunction]:
    from provrepair.repair.tools import domains

    return dict(domains.FUNCTIONS.get(domain, {}))
