"""A deterministic embedding function for the semantic-search tests (no model download): a
bag of words hashed into DIMS buckets, normalised. Two texts sharing words are close."""

from __future__ import annotations

import hashlib
import math
import re

DIMS = 64


def embed(texts: list[str]) -> list[list[float]]:
    return [_vector(t) for t in texts]


def _vector(text: str) -> list[float]:
    vector = [0.0] * DIMS
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMS] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]
