"""One self-contained HTML file: template + CSS + vendored cytoscape.js + the page's script
+ the graph as JSON. Nothing is fetched at view time (the page's Content-Security-Policy
forbids it: `default-src 'none'`).

The vendored library is cytoscape 3.34.4 from npm (`npm pack cytoscape@3.34.4`,
dist/cytoscape.min.js), MIT licensed: static/cytoscape.LICENSE, pinned by its SHA-256 below.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from functools import cache
from importlib import resources
from typing import Any

from provrepair.provenance.errors import InternalError

CYTOSCAPE = "static/cytoscape.min.js"
CYTOSCAPE_VERSION = "3.34.4"
CYTOSCAPE_SHA256 = "081591ab735b2b6a3b31a3c60f8f3a3e2fee8c92939e0c7820ad1208571b6cd8"
MARKER = re.compile(r"@(?:TITLE|STYLE|DATA|CYTOSCAPE|SCRIPT)@")


def _asset(name: str) -> str:
    return resources.files("provrepair.view").joinpath(name).read_text(encoding="utf-8")


@cache
def cytoscape_js() -> str:
    text = _asset(CYTOSCAPE)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if digest != CYTOSCAPE_SHA256:
        raise InternalError(f"view/{CYTOSCAPE}: SHA-256 {digest} is not the pinned "
                            f"cytoscape {CYTOSCAPE_VERSION} ({CYTOSCAPE_SHA256})")
    return text


def _inline_script(text: str, name: str) -> str:
    if "</script" in text.lower() or "<!--" in text:
        raise InternalError(f"view/{name} cannot be inlined: it contains </script or <!--")
    return text


def json_for_html(data: Any) -> str:
    """JSON safe inside <script type="application/json">: no `<`, `>` or `&` survive."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render(data: dict[str, Any]) -> str:
    """The page for view data from view.graph.view_data."""
    run = data.get("run") or {}
    title = f"provrepair · task {data['task']['task_id']}"
    if run:
        title += f" · run {run['run_id']}"
    parts = {
        "@TITLE@": html.escape(title),
        "@STYLE@": _asset("view.css"),
        "@DATA@": json_for_html(data),
        "@CYTOSCAPE@": _inline_script(cytoscape_js(), CYTOSCAPE),
        "@SCRIPT@": _inline_script(_asset("view.js"), "view.js"),
    }
    # One pass over the template: text from the data is never scanned for markers.
    return MARKER.sub(lambda m: parts[m.group(0)], _asset("template.html"))
