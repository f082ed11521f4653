"""provrepair: provenance store and repair engine for memory-augmented LLM agents.

The library's public API is importable from here; names load on first use, so
`import provrepair` is cheap and has no side effects.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from provrepair.provenance.recorder import Recorder
    from provrepair.provenance.store.config import connect, open_store

# public name → "module:attribute"
_API = {
    "open_store": "provrepair.provenance.store.config:open_store",
    "connect": "provrepair.provenance.store.config:connect",
    "Recorder": "provrepair.provenance.recorder:Recorder",
}

__all__ = ["Recorder", "connect", "open_store"]  # the keys of _API (a test checks)


def __getattr__(name: str) -> Any:
    target = _API.get(name)
    if target is None:
        raise AttributeError(f"module 'provrepair' has no attribute {name!r}")
    module, attr = target.split(":")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value
