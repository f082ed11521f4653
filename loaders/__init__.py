"""Outside formats in: each loader turns files into validated cases (`--from NAME`).

`LOADERS` names them; a package adds its own format through the "provrepair.loaders" entry
points (provenance/registry.py): a callable `load(paths: list[Path]) -> list[Case]`.
"""

from __future__ import annotations

from pathlib import Path

from provrepair.provenance.models import Case
from provrepair.provenance.registry import Registry

LOADERS: Registry[list[Case]] = Registry("loader", {
    "case": "provrepair.loaders.case_files:load_cases",
    "openai-messages": "provrepair.loaders.openai_messages:load_transcripts",
    "otel": "provrepair.loaders.otel:load_otlp",
})


def load(source_format: str, paths: list[Path]) -> list[Case]:
    """The cases in `paths`, read as `source_format` (a `LOADERS` name)."""
    return LOADERS.create(source_format, paths)
