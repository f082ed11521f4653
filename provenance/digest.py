"""A case's content hash: sha256 of its canonical JSON, also computable piece by piece.

The canonical JSON is `json.dumps(case.model_dump(mode="json"), sort_keys=True,
ensure_ascii=False)`; every stored task carries the first 32 hex digits (`content_hash`), and
re-ingesting identical content is a no-op because the two compare equal. Building and hashing
that text at once took 1.8 s of a 1M-element ingest, before the first write. `CaseDigest`
hashes the very same bytes one record at a time, so ingest feeds it between write batches,
while the server executes the batch before (provenance/ingest.py; BENCHMARKS.md, "Ingest").
tests/unit/test_digest.py checks that both give the same hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from itertools import islice
from typing import Any

# One encoder, as json.dumps builds it for these arguments: the separators (", ", ": ") and
# the key order of every nested object are the same.
_encode = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode


def content_hash_of(dumped: dict[str, Any]) -> str:
    """The hash of a dumped case, in one go."""
    canonical = json.dumps(dumped, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def canonical_pieces(dumped: dict[str, Any]) -> Iterator[str]:
    """The canonical JSON of a dumped case in pieces: one per record of its lists."""
    yield "{"
    for n, key in enumerate(sorted(dumped)):
        value = dumped[key]
        yield (", " if n else "") + _encode(key) + ": "
        if type(value) is list and value:
            yield "["
            for i, item in enumerate(value):
                yield ", " + _encode(item) if i else _encode(item)
            yield "]"
        else:
            yield _encode(value)
    yield "}"


def piece_count(dumped: dict[str, Any]) -> int:
    """How many pieces canonical_pieces yields."""
    return 2 + sum(len(v) + 3 if type(v) is list and v else 2 for v in dumped.values())


class CaseDigest:
    """content_hash_of(dumped), fed `advance(n)` pieces at a time."""

    def __init__(self, dumped: dict[str, Any]):
        self.pieces = piece_count(dumped)
        self._todo = canonical_pieces(dumped)
        self._sha = hashlib.sha256()

    def advance(self, n: int) -> None:
        update = self._sha.update
        for piece in islice(self._todo, n):
            update(piece.encode("utf-8"))

    def hexdigest(self) -> str:
        """The hash (the pieces not fed yet are fed now)."""
        for piece in self._todo:
            self._sha.update(piece.encode("utf-8"))
        return self._sha.hexdigest()[:32]
