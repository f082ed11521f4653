"""The HTML page is self-contained and safe: the data survives any content, the vendored
library is the pinned one with its licence, and nothing is loaded from the network."""

from __future__ import annotations

import hashlib
import json
import re
from html.parser import HTMLParser
from importlib import resources
from typing import Any

from provrepair.view.page import (
    CYTOSCAPE_SHA256,
    CYTOSCAPE_VERSION,
    DAGRE_SHA256,
    DAGRE_VERSION,
    json_for_html,
    render,
)
from provrepair.view.palette import page_palette

HOSTILE = "</script><script>alert(1)</script> <!-- & @SCRIPT@ @DATA@ \u2028 '\""


def sample(content: str = "hello") -> dict[str, Any]:
    node = {"id": "s_1", "kind": "step", "step_type": "claim", "turn": 1, "position": 0,
            "ts": 1, "timestamps": {"timestamp": 1}, "details": {}, "content": content,
            "content_length": len(content), "phase": "both", "replaces": None,
            "origin_run": None, "disp": "preserved", "marks": ["PRESERVED"],
            "why": ["preserved"], "status_before": "ok", "status_after": "ok",
            "replaced": False, "x": 0.0, "y": 0.0}
    return {"task": {"task_id": "t</title><b>", "domain": "d", "diagnosed_faults": []},
            "run": None, "palette": page_palette(), "nodes": [node], "edges": []}


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_title = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


def embedded_json(page: str) -> Any:
    match = re.search(r'<script type="application/json" id="provrepair-data">(.*?)</script>',
                      page, re.S)
    assert match is not None
    return json.loads(match.group(1))


def test_data_round_trips_whatever_the_content() -> None:
    data = sample(HOSTILE)
    page = render(data)
    assert embedded_json(page) == data
    assert "@SCRIPT@" not in page.split('id="provrepair-data">')[0]  # markers all replaced
    assert page.count("<script") == 4  # data, cytoscape, dagre, the page's script: nothing more


def test_json_for_html_leaves_no_markup() -> None:
    text = json_for_html({"a": "</script><!--&"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": "</script><!--&"}


def test_title_is_escaped() -> None:
    parser = Tags()
    parser.feed(render(sample()))
    assert parser.title == "provrepair · task t</title><b>"
    assert [t for t, _ in parser.tags].count("b") == 0


def test_nothing_is_loaded_from_the_network() -> None:
    parser = Tags()
    page = render(sample())
    parser.feed(page)
    for tag, attrs in parser.tags:
        assert "src" not in attrs, tag
        assert tag != "link", attrs
    csp = [a for t, a in parser.tags if t == "meta" and a.get("http-equiv") ==
           "Content-Security-Policy"]
    assert csp and "default-src 'none'" in (csp[0]["content"] or "")
    script = resources.files("provrepair.view").joinpath("view.js").read_text(encoding="utf-8")
    assert not re.search(r"fetch\(|XMLHttpRequest|https?://|import\(", script)


def test_vendored_library_is_pinned_and_licensed() -> None:
    folder = resources.files("provrepair.view").joinpath("static")
    library = folder.joinpath("cytoscape.min.js").read_text(encoding="utf-8")
    assert hashlib.sha256(library.encode()).hexdigest() == CYTOSCAPE_SHA256
    assert f'version="{CYTOSCAPE_VERSION}"' in library
    licence = folder.joinpath("cytoscape.LICENSE").read_text(encoding="utf-8")
    assert "The Cytoscape Consortium" in licence and "Permission is hereby granted" in licence
    layout = folder.joinpath("cytoscape-dagre.min.js").read_text(encoding="utf-8")
    assert hashlib.sha256(layout.encode()).hexdigest() == DAGRE_SHA256
    assert f'"{DAGRE_VERSION}"' in layout
    licence = folder.joinpath("cytoscape-dagre.LICENSE").read_text(encoding="utf-8")
    assert "The Cytoscape Consortium" in licence and "Chris Pettitt" in licence
