"""Headless Debian Chromium driven over the DevTools protocol, for the view tests.

A page is loaded, then the harness *waits for a condition* — the page's `#graph` reports
`data-ready="true"` and two animation frames have been painted since — before it reads the
DOM or takes a screenshot. No fixed sleep and no race with the renderer (`--screenshot` on the
command line snapped whenever its virtual-time budget ran out, sometimes before cytoscape's
first frame: the old flaky colour checks).

Also here: `Page`, what the rendered DOM says, and a minimal PNG decoder for pixel checks.
"""

from __future__ import annotations

import base64
import json
import subprocess
import tempfile
import time
import urllib.request
import zlib
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import websocket

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0", "--window-size=1400,900", "--hide-scrollbars")
READY = "document.readyState === 'complete' && !!document.getElementById('graph') " \
        "&& document.getElementById('graph').dataset.ready === 'true'"
TWO_FRAMES = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"


def wait_for(condition: Any, timeout: float, what: str, every: float = 0.05) -> Any:
    """Poll `condition()` until it returns something truthy; fail naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


class Chromium:
    """One headless Chromium with one page, controlled over a DevTools websocket."""

    def __init__(self, exe: str, tmp: Path, timeout: float = 120):
        self.timeout = timeout
        profile = Path(tempfile.mkdtemp(prefix="chromium-profile-", dir=tmp))
        self.proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        text = wait_for(lambda: port_file.exists() and port_file.read_text().strip(), 60,
                        "Chromium's DevTools port")
        port = int(text.splitlines()[0])
        targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",
                                                    timeout=10).read())
        url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(url, timeout=timeout, suppress_origin=True)
        self.next_id = 0
        self.call("Emulation.setDeviceMetricsOverride", width=1400, height=900,
                  deviceScaleFactor=1, mobile=False)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:  # events arrive in between: skip them
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                result: dict[str, Any] = reply["result"]
                return result

    def evaluate(self, expression: str, promise: bool = False) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=promise)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def open(self, page: Path, fragment: str = "", timeout: float | None = None) -> None:
        """Load the page fresh (a new document, so its script reads the fragment) and wait
        until it is ready and painted."""
        self.call("Page.navigate", url="about:blank")
        self.call("Page.navigate", url=page.as_uri() + fragment)
        wait_for(lambda: self.evaluate(READY), timeout or self.timeout, "the page to be ready")
        self.evaluate(TWO_FRAMES, promise=True)

    def dom(self) -> Page:
        parsed = Page()
        parsed.feed(self.evaluate("document.documentElement.outerHTML"))
        return parsed

    def screenshot(self, png: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        png.write_bytes(base64.b64decode(data))
        return png

    def close(self) -> None:
        self.ws.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page(HTMLParser):
    """What the rendered DOM says: #graph's attributes, the legend, the details panel."""

    def __init__(self) -> None:
        super().__init__()
        self.graph: dict[str, str | None] = {}
        self.legend: dict[str, dict[str, str | None]] = {}
        self.buttons: dict[str, dict[str, str | None]] = {}
        self.details_node: str | None = None
        self.details_text = ""
        self.why: list[str] = []
        self._in_why = False
        self._details_depth = 0   # open <div>s inside #details

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "div" and (self._details_depth or a.get("id") == "details"):
            self._details_depth += 1
        if a.get("id") == "graph":
            self.graph = a
        elif tag == "li" and "legend-entry" in (a.get("class") or ""):
            self.legend[a["data-key"] or ""] = a
        elif tag == "button":
            self.buttons[a.get("id") or ""] = a
        elif a.get("id") == "details":
            self.details_node = a.get("data-node")
        elif a.get("id") == "why":
            self._in_why = True
        elif tag == "li" and self._in_why:
            self.why.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "ul":
            self._in_why = False
        if tag == "div" and self._details_depth:
            self._details_depth -= 1

    def handle_data(self, data: str) -> None:
        if self._details_depth:
            self.details_text += data + " "
        if self._in_why and self.why:
            self.why[-1] += data

    @property
    def nodes(self) -> int:
        return int(self.graph["data-node-count"] or -1)

    @property
    def edges(self) -> int:
        return int(self.graph["data-edge-count"] or -1)

    def counts(self) -> dict[str, int]:
        return {key: int(a["data-count"] or 0) for key, a in self.legend.items()}

    def colour(self, key: str) -> str:
        return self.legend[key]["data-color"] or ""


def png_rows(path: Path) -> tuple[int, int, int, list[bytearray]]:
    """A minimal PNG decoder (8-bit RGB/RGBA, not interlaced: what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, [], b""
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat.append(body)
    width, height = int.from_bytes(header[:4], "big"), int.from_bytes(header[4:8], "big")
    assert header[8] == 8 and header[12] == 0 and header[9] in (2, 6), header
    bpp = 3 if header[9] == 2 else 4
    raw, stride = zlib.decompress(b"".join(idat)), width * bpp
    prev, rows = bytearray(stride), []
    for y in range(height):
        start = y * (stride + 1)
        line = bytearray(raw[start + 1:start + 1 + stride])
        _unfilter(raw[start], line, prev, bpp)
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def _unfilter(kind: int, line: bytearray, prev: bytearray, bpp: int) -> None:
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
        if kind == 1:
            line[i] = (line[i] + a) & 255
        elif kind == 2:
            line[i] = (line[i] + b) & 255
        elif kind == 3:
            line[i] = (line[i] + ((a + b) >> 1)) & 255
        elif kind == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255


def drawn_colours(png: Path, area: tuple[int, int, int, int]) -> Counter[str]:
    """Pixel colours (#rrggbb) inside `area` (x0, y0, x1, y1) of a screenshot."""
    _, _, bpp, rows = png_rows(png)
    x0, y0, x1, y1 = area
    found: Counter[str] = Counter()
    for row in rows[y0:y1]:
        for x in range(x0, x1):
            found["#" + bytes(row[x * bpp:x * bpp + 3]).hex()] += 1
    return found
