"""Repair methods behind one interface: each makes a rollback plan for a task; the same
executor replays it (docs/method.md, "Baselines and ablations: same interface, same
executor"). `METHODS` is the method registry (provenance/registry.py): the CLI name
(`provrepair plan|repair --method NAME`) → the method.

The engine's methods are built in and can never be replaced (ours.py):

    dependency_guided    ours, the default (the paper's plan and rule 8)
    paper                the paper's method: docs/method.md without rule 8

Every other method comes through the "provrepair.methods" entry points: the benchmark's
baselines and ablations (provrepair/benchmark/methods/, declared in pyproject.toml) and any
installed package's; `provrepair plugins` lists them with their source. `register` adds
one from Python code.
"""

from __future__ import annotations

from provrepair.provenance.registry import Registry
from provrepair.repair.methods.base import Decision, Method, MethodContext, MethodNotRun, Planned

DEFAULT_METHOD = "dependency_guided"

METHODS: Registry[Method] = Registry("method", {
    "dependency_guided": "provrepair.repair.methods.ours:DependencyGuided",
    "paper": "provrepair.repair.methods.ours:Paper",
})

_made: dict[str, Method] = {}  # name → the method made once (methods hold no state)


def get_method(name: str) -> Method:
    """The method registered under `name` (ConfigError naming every known method if none)."""
    method = _made.get(name)
    if method is None:
        _made[name] = method = METHODS.create(name)
    return method


def method_names() -> list[str]:
    """Every method the registry knows: built-ins first, then the others by name."""
    builtins = METHODS.builtin_names()
    return [*builtins, *(n for n in METHODS.names() if n not in builtins)]


def register(method: Method) -> None:
    """Add a method from Python code under its `name`: ConfigError for a built-in's or an
    installed plugin's name (never silently replaced)."""
    def factory() -> Method:
        return method

    factory.__module__, factory.__qualname__ = type(method).__module__, type(method).__qualname__
    METHODS.register(method.name, factory)
    _made.pop(method.name, None)


__all__ = ["DEFAULT_METHOD", "METHODS", "Decision", "Method", "MethodContext", "MethodNotRun",
           "Planned", "get_method", "method_names", "register"]
