"""Index keys: injective, index-safe encodings of task and node ids.

Measured on FalkorDB 4.16 (see tests/integration/test_index_keys.py): an indexed string
lookup never finds a value containing \\x01, with leading or trailing white space, or the
empty string, and `{v: "a"}` also matches "a " and " a". Ids are stored verbatim in `id` and
`task_id`, but every *indexed* property holds a percent-encoding of them (only
[A-Za-z0-9_.~-%] remain), with a fixed non-empty prefix, so lookups are exact on both engines.
`/` is always encoded inside a part, so it separates task key and node id unambiguously.

The same engine finds no indexed string longer than 4096 bytes, so a part whose encoding is
longer than MAX_PART characters is replaced by `#` + its SHA-256 (`#` is always encoded by
quote(), so a hashed part never equals an encoded one): every key stays under 4096 bytes.
"""

from __future__ import annotations

import hashlib
from urllib.parse import quote

LIVE_PREFIX = "~"      # key of a task visible to users
STAGING_PREFIX = "!"   # key of a task copy being written by ingest (quote() always encodes !)
MAX_PART = 1500


def _enc(text: str) -> str:
    encoded = quote(text, safe="")
    if len(encoded) <= MAX_PART:
        return encoded
    return "#" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def task_key(task_id: str) -> str:
    return LIVE_PREFIX + _enc(task_id)


def staging_key(task_id: str) -> str:
    return STAGING_PREFIX + _enc(task_id)


def node_uid(key: str, node_id: str) -> str:
    """uid of a node of the task whose key (live or staging) is `key`."""
    return f"{key}/{_enc(node_id)}"


def eval_key(task_id: str, content_hash: str) -> str:
    return f"{task_key(task_id)}/{content_hash}"


def agent_record_key(namespace: str, record_id: str) -> str:
    """Key of one record of a shared agent memory: (namespace, the agent's id of it). `@` is
    always encoded inside a part, so no task or node key equals one."""
    return f"@{_enc(namespace)}/{_enc(record_id)}"
