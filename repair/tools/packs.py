"""Domain tool packs and derivation functions, looked up by a case's `domain`.

`TOOL_PACKS` names the packs (provenance/registry.py: plugins add packs through the
`provrepair.tool_packs` entry points); a pack factory returns a `ToolPack`, the domain's
tools with the side-effect class of each (a tool a pack runs but does not declare is
irreversible, like any undeclared tool).
"""

from __future__ import annotations

from provrepair.provenance.registry import Registry
from provrepair.repair.derive import DomainFunction
from provrepair.repair.tools.base import ToolPack

__all__ = ["TOOL_PACKS", "ToolPack", "domain_functions", "domain_tools"]  # ToolPack: for plugins

TOOL_PACKS: Registry[ToolPack] = Registry("tool pack", {
    "shopping": "provrepair.repair.tools.domains:shopping_pack",
    "travel": "provrepair.repair.tools.domains:travel_pack",
    "customer_support": "provrepair.repair.tools.domains:customer_support_pack",
})


def domain_tools(domain: str) -> ToolPack:
    """The domain's pack; a domain without one has no tools to run (its calls come from the
    case's recorded environment or the user's declaration)."""
    factory = TOOL_PACKS.find(domain)
    return factory() if factory is not None else ToolPack({}, [])


def domain_functions(domain: str) -> dict[str, DomainFunction]:
    from provrepair.repair.tools import domains

    return dict(domains.FUNCTIONS.get(domain, {}))
