"""Whether a text states a value: normalised and bounded (the echo sweep, repair/plan/echo.py;
the benchmark's scoring reads values the same way).

Normalised: Unicode NFKC (full-width forms, no-break spaces, ligatures), case folded, white
space collapsed — "Seat class:  Ｅconomy" states "seat class: economy". Bounded: the value
must stand as whole tokens — "economy" is not in "economyplus", and a number is whole:
"$500" is not in "$5000", "$500.50" or "$1,500" (a digit, or a decimal point or thousands
comma followed by a digit, continues a number). A value that begins or ends with a non-word
character ("$500") is bounded on that side by itself.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache


def normalize(text: str | None) -> str:
    """NFKC, case folded, white space collapsed and stripped."""
    return " ".join(unicodedata.normalize("NFKC", text or "").casefold().split())


@lru_cache(maxsize=4096)
def _pattern(value: str) -> re.Pattern[str]:
    """The bounded pattern of a normalised value."""
    left = right = ""
    if value[0].isalnum() or value[0] == "_":
        left = r"(?<![\w])" + (r"(?<!\d[.,])" if value[0].isdigit() else "")
    if value[-1].isalnum() or value[-1] == "_":
        right = r"(?![\w])" + (r"(?![.,]\d)" if value[-1].isdigit() else "")
    return re.compile(left + re.escape(value) + right)


def states(text: str | None, value: str | None) -> bool:
    """`text` states `value`: normalised, as whole tokens (an empty value is never stated)."""
    needle = normalize(value)
    return bool(needle) and _pattern(needle).search(normalize(text)) is not None


def same_value(a: object, b: object) -> bool:
    """Two fact values are the same value once normalised (None equals nothing)."""
    return a is not None and b is not None and normalize(str(a)) == normalize(str(b))


def without(text: str | None, values: Iterable[str]) -> str:
    """The normalised text with every bounded occurrence of `values` cut out, longest first
    (so a wrong "economy" is not read inside a required "premium economy")."""
    out = normalize(text)
    for value in sorted({normalize(v) for v in values if normalize(v)}, key=len, reverse=True):
        out = _pattern(value).sub(" ", out)
    return out
