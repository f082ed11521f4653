"""One self-contained HTML file: template + CSS + vendored cytoscape.js and its layered
layout + the page's script + the graph as JSON. Nothing is fetched at view time (the page's
Content-Security-Policy forbids it: `default-src 'none'`).

The vendored libraries come from npm, each pinned by its SHA-256 below, MIT licensed:
  cytoscape 3.34.4        `npm pack cytoscape@3.34.4`, dist/cytoscape.min.js
                          (static/cytoscape.LICENSE)
  cytoscape-dagre 4.0.1   `npm pack cytoscape-dagre@4.0.1`, dist/cytoscape-dagre.min.js, which
                          bundles @dagrejs/dagre 3.0.0 (static/cytoscape-dagre.LICENSE)
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
DAGRE = "static/cytoscape-dagre.min.js"
DAGRE_VERSION = "4.0.1"
DAGRE_SHA256 = "ec671a41d2bfcac580352e2997797793949e3489cecaf347fc48670d4bd456b0"
PINNED = {CYTOSCAPE: (f"cytoscape {CYTOSCAPE_VERSION}", CYTOSCAPE_SHA256),
          DAGRE: (f"cytoscape-dagre {DAGRE_VERSION}", DAGRE_SHA256)}
MARKER = re.compile(r"@(?:TITLE|STYLE|DATA|CYTOSCAPE|DAGRE|SCRIPT)@")


def _asset(name: str) -> str:
    return resources.files("provrepair.view").joinpath(name).read_text(encoding="utf-8")


@cache
def vendored_js(name: str) -> str:
    """A vendored library, checked against its pinned SHA-256."""
    text = _asset(name)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    what, pinned = PINNED[name]
    if digest != pinned:
        raise InternalError(f"view/{name}: SHA-256 {digest} is not the pinned {what} ({pinned})")
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
        "@CYTOSCAPE@": _inline_script(vendored_js(CYTOSCAPE), CYTOSCAPE),
        "@DAGRE@": _inline_script(vendored_js(DAGRE), DAGRE),
        "@SCRIPT@": _inline_script(_asset("view.js"), "view.js"),
    }
    # One pass over the template: text from the data is never scanned for markers.
    return MARKER.sub(lambda m: parts[m.group(0)], _asset("template.html"))
