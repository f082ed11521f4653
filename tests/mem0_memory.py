"""An agent's mem0 memory for the tests, fully local: mem0's own default vector store (Qdrant)
on a directory, its history in SQLite there too, and its OpenAI embedder and LLM pointed at
the suite's OpenAI-compatible double (tests/openai_double.py: deterministic embeddings of
tests/embedding.py; `infer=False` writes call no LLM). mem0's telemetry is off for the whole
suite (tests/conftest.py sets MEM0_TELEMETRY before mem0 is imported)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.embedding import DIMS


def mem0_config(folder: Path, base_url: str) -> dict[str, Any]:
    """mem0's config (`Memory.from_config`) for a memory kept in `folder`."""
    (folder / "qdrant").mkdir(parents=True, exist_ok=True)
    endpoint = {"api_key": "test", "openai_base_url": base_url}
    return {"embedder": {"provider": "openai",
                         "config": {**endpoint, "model": "double-embed", "embedding_dims": DIMS}},
            "llm": {"provider": "openai", "config": {**endpoint, "model": "double-model"}},
            "vector_store": {"provider": "qdrant",
                             "config": {"collection_name": "agent", "path": str(folder / "qdrant"),
                                        "embedding_model_dims": DIMS, "on_disk": True}},
            "history_db_path": str(folder / "history.db")}


def write_config(folder: Path, base_url: str) -> Path:
    """The config as the JSON file `provrepair apply --to mem0:FILE` reads."""
    path = folder / "mem0.json"
    path.write_text(json.dumps(mem0_config(folder, base_url)))
    return path


def open_memory(folder: Path, base_url: str) -> Any:
    from mem0 import Memory

    return Memory.from_config(mem0_config(folder, base_url))


def close_memory(memory: Any) -> None:
    """Close it the way the agent's process would end: a local Qdrant admits one process, so
    the CLI can open the directory only after this."""
    memory.close()
    memory.vector_store.client.close()


def scope_records(memory: Any, **scope: str) -> dict[str, str]:
    """The records the agent's `get_all` returns for a scope: mem0 id → text."""
    return {r["id"]: r["memory"] for r in memory.get_all(filters=scope, top_k=100)["results"]}
