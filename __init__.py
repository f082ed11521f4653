"""provrepair: provenance store and repair engine for memory-augmented LLM agents.

The library's public API is importable from here; names load on first use, so
`import provrepair` is cheap and has no side effects.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from provrepair.integrations.langgraph import RecordingStore
    from provrepair.integrations.mem0 import RecordingMemory
    from provrepair.provenance.ingest import ingest_case
    from provrepair.provenance.recorder import Recorder
    from provrepair.provenance.store.config import connect, open_store
    from provrepair.provenance.validate import parse_case
    from provrepair.repair.appliers import apply_patch, apply_patch_async, open_memory_store
    from provrepair.repair.appliers.jsonl import JsonlMemory
    from provrepair.repair.appliers.langgraph import AsyncLangGraphMemory, LangGraphMemory
    from provrepair.repair.appliers.mem0 import Mem0Memory
    from provrepair.repair.patch import load_patch, memory_patch
    from provrepair.repair.plan import plan
    from provrepair.repair.service import run_repair
    from provrepair.repair.tools.declared import ToolSet

# public name → "module:attribute"
_API = {
    "open_store": "provrepair.provenance.store.config:open_store",
    "connect": "provrepair.provenance.store.config:connect",
    "Recorder": "provrepair.provenance.recorder:Recorder",
    "parse_case": "provrepair.provenance.validate:parse_case",
    "ingest_case": "provrepair.provenance.ingest:ingest_case",
    "plan": "provrepair.repair.plan:plan",
    # not "repair": that name is the package provrepair.repair
    "run_repair": "provrepair.repair.service:run_repair",
    "ToolSet": "provrepair.repair.tools.declared:ToolSet",
    "memory_patch": "provrepair.repair.patch:memory_patch",
    "load_patch": "provrepair.repair.patch:load_patch",
    "apply_patch": "provrepair.repair.appliers:apply_patch",
    "apply_patch_async": "provrepair.repair.appliers:apply_patch_async",
    "open_memory_store": "provrepair.repair.appliers:open_memory_store",
    "LangGraphMemory": "provrepair.repair.appliers.langgraph:LangGraphMemory",
    "AsyncLangGraphMemory": "provrepair.repair.appliers.langgraph:AsyncLangGraphMemory",
    "JsonlMemory": "provrepair.repair.appliers.jsonl:JsonlMemory",
    "Mem0Memory": "provrepair.repair.appliers.mem0:Mem0Memory",
    "RecordingStore": "provrepair.integrations.langgraph:RecordingStore",
    "RecordingMemory": "provrepair.integrations.mem0:RecordingMemory",
}

# the keys of _API (a test checks)
__all__ = ["AsyncLangGraphMemory", "JsonlMemory", "LangGraphMemory", "Mem0Memory", "Recorder",
           "RecordingMemory", "RecordingStore", "ToolSet", "apply_patch", "apply_patch_async",
           "connect", "ingest_case", "load_patch", "memory_patch", "open_memory_store",
           "open_store", "parse_case", "plan", "run_repair"]


def __getattr__(name: str) -> Any:
    target = _API.get(name)
    if target is None:
        raise AttributeError(f"module 'provrepair' has no attribute {name!r}")
    module, attr = target.split(":")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value
