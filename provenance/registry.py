"""Named, pluggable parts: one `Registry` per kind (name → factory), open to plugins.

    REASONERS = Registry("reasoner", {"offline": "provrepair.repair.reasoners.offline:OfflineReasoner"})
    REASONERS.create("offline")          # the built-in, imported on first use
    REASONERS.create("ofline")           # ConfigError: unknown reasoner 'ofline'; known: offline, ...

Each kind's registry lives beside the things it names (repair/reasoners/__init__.py,
repair/tools/packs.py, ...); a kind is put on a registry with one line. Built-ins are given as
"module:attribute" strings, imported only when that name is asked for, so importing a registry
imports nothing else. Plugins are installed packages that declare an entry point in the kind's
group (`GROUPS`), as datasette and sqlite-utils plugins do:

    [project.entry-points."provrepair.reasoners"]
    mymodel = "my_package.reasoner:MyReasoner"

A plugin never replaces a built-in of the same name (a typo'd or hostile package cannot
redirect "offline" to a network service); `register` adds one from Python code, and refuses a
built-in's or an installed plugin's name. `entries()` says where each name comes from
(`provrepair plugins` prints it, as `datasette plugins` does).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

from provrepair.provenance.errors import ConfigError

T = TypeVar("T")

# kind → entry-point group plugins declare their factories in
GROUPS = {
    "reasoner": "provrepair.reasoners",
    "tool pack": "provrepair.tool_packs",
    "loader": "provrepair.loaders",
    "applier": "provrepair.appliers",
    "engine": "provrepair.engines",
    "method": "provrepair.methods",
}


BUILT_IN = "built-in"
REGISTERED = "registered from Python"


@dataclass(frozen=True)
class Entry:
    """One name of a registry and where it comes from: `source` is "built-in", "registered
    from Python", or the installed distribution declaring it ("name version"); `target` the
    "module:attribute" it loads (a callable's qualified name when registered); `shadowed`: a
    plugin's name that a built-in holds, so the plugin is never used."""

    kind: str
    name: str
    source: str
    target: str
    shadowed: bool = False


class Registry(Generic[T]):
    """Name → factory for one kind. Lookups are exact; a miss names every known name."""

    def __init__(self, kind: str, builtins: Mapping[str, str | Callable[..., T]]):
        if kind not in GROUPS:
            raise ValueError(f"no entry-point group for kind {kind!r}; add it to GROUPS")
        self.kind, self.group = kind, GROUPS[kind]
        self._builtins = dict(builtins)
        self._registered: dict[str, str | Callable[..., T]] = {}

    def names(self) -> list[str]:
        return sorted({*self._builtins, *self._registered, *self._plugins()})

    def builtin_names(self) -> list[str]:
        return list(self._builtins)

    def register(self, name: str, factory: str | Callable[..., T]) -> None:
        """Add a name from Python code (registering it again replaces the earlier one);
        a built-in's or an installed plugin's name is refused, never silently replaced."""
        if name in self._builtins:
            raise ConfigError(f"{self.kind} {name!r} is built in and cannot be replaced")
        plugin = self._plugins().get(name)
        if plugin is not None:
            raise ConfigError(f"{self.kind} {name!r} is provided by the installed package "
                              f"{_source(plugin)} and cannot be replaced; register it under "
                              "another name")
        self._registered[name] = factory

    def entries(self) -> list[Entry]:
        """Every name with its source, built-ins first, then the others by name; a plugin
        whose name a built-in holds is listed too, marked `shadowed`."""
        out = [Entry(self.kind, n, BUILT_IN, _target(t)) for n, t in self._builtins.items()]
        others = [Entry(self.kind, n, REGISTERED, _target(t)) for n, t in self._registered.items()]
        for ep in entry_points(group=self.group):
            others.append(Entry(self.kind, ep.name, _source(ep), ep.value,
                                shadowed=ep.name in self._builtins))
        return out + sorted(others, key=lambda e: (e.name, e.source))

    def find(self, name: str) -> Callable[..., T] | None:
        """The factory registered under `name`, or None."""
        target = self._builtins.get(name) or self._registered.get(name)
        if target is not None:
            return _load(target)
        plugin = self._plugins().get(name)
        return plugin.load() if plugin is not None else None

    def get(self, name: str) -> Callable[..., T]:
        factory = self.find(name)
        if factory is None:
            raise ConfigError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())} "
                              f"(plugins add names through the {self.group!r} entry points)")
        return factory

    def create(self, name: str, *args: Any, **kwargs: Any) -> T:
        return self.get(name)(*args, **kwargs)

    def _plugins(self) -> dict[str, Any]:
        # read on each call: a plugin installed while the process runs is seen, and nothing is
        # imported until its name is asked for
        return {ep.name: ep for ep in entry_points(group=self.group)
                if ep.name not in self._builtins}


def _source(ep: EntryPoint) -> str:
    dist = ep.dist
    return f"{dist.name} {dist.version}" if dist is not None else "an installed package"


def _target(target: str | Callable[..., Any]) -> str:
    if isinstance(target, str):
        return target
    return f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', repr(target))}"


def _load(target: str | Callable[..., T]) -> Callable[..., T]:
    if not isinstance(target, str):
        return target
    module, _, attribute = target.partition(":")
    value: Any = importlib.import_module(module)
    for part in attribute.split("."):
        value = getattr(value, part)
    loaded: Callable[..., T] = value
    return loaded
