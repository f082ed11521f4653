"""Repair methods behind one interface: each makes a rollback plan for a task; the same
executor replays it (repair-semantics.md, "Baselines and ablations: same interface, same
executor"). `METHODS` maps the CLI name (`provrepair repair --method NAME`) to the method.
"""

from __future__ import annotations

from repair.methods.base import Method, MethodContext
from repair.methods.ours import DependencyGuided, WithoutSupportCheck

METHODS: dict[str, Method] = {m.name: m for m in (DependencyGuided(), WithoutSupportCheck())}


def get_method(name: str) -> Method:
    from provenance.errors import ConfigError

    if name not in METHODS:
        raise ConfigError(f"unknown method {name!r}; choose one of {', '.join(sorted(METHODS))}")
    return METHODS[name]


def register(method: Method) -> None:
    METHODS[method.name] = method


__all__ = ["METHODS", "Method", "MethodContext", "get_method", "register"]
