"""The documents of an OTLP trace file, whatever its encoding and attribute set: what
`ingest --from otel` hands loaders/otel.py (its one entry hook).

JSON (`.json`, `.jsonl`, read as loaders/case_files.py reads them) or protobuf
(loaders/otlp_protobuf.py: `.pb`, `.binpb`, `.otlp.pb`, or a file whose content is not JSON),
each document with its OpenInference or OpenLLMetry spans mapped to the GenAI attributes
(loaders/otel_dialects.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from provrepair.loaders.case_files import read_json_records
from provrepair.loaders.otel_dialects import normalize_documents
from provrepair.loaders.otlp_protobuf import is_protobuf_file, read_protobuf


def otlp_documents(path: Path) -> list[tuple[str, Any]]:
    """(location, OTLP/JSON-shaped document) for each document of the file (the dialects are
    mapped over the whole file: a tool span and the model call it answers may be two lines)."""
    read = list(read_protobuf(path) if is_protobuf_file(path) else read_json_records(path))
    documents = normalize_documents([raw for _, raw in read])
    return [(where, doc) for (where, _), doc in zip(read, documents, strict=True)]
