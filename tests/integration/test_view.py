"""`provrepair view` in a real browser: headless Debian Chromium renders the page offline, and
the test reads back from the DOM what the canvas draws (node count, nodes per colour, the
details of a node) and checks the screenshot's pixels for every colour the legend counts.

Chromium is installed when missing (apt-get, as root); the tests are skipped, with the
reason, only when it is absent and cannot be installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import zlib
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, REPO, Cli

EXAMPLE = EXAMPLES / "shopping_poisoned_price.json"
ALL_COLOURS_CASE = REPO / "tests" / "cases" / "planner" / "derived_memory_support.json"
# The legend's order of precedence (a node is drawn in the last of these it has).
PRECEDENCE = [("preserved", "preserve_step_ids"), ("affected", "affected_ids"),
              ("supported", "supported_ids"), ("invalidated", "invalidate_claim_ids"),
              ("replayed", "replay_step_ids"), ("suspicious", "suspicious_step_ids"),
              ("quarantined", "quarantine_memory_ids"), ("faulty", "delete_memory_ids")]
GRAPH_AREA = (0, 100, 1030, 890)   # x0, y0, x1, y1 of the canvas in a 1400x900 screenshot


def _install_chromium() -> str | None:
    """None when chromium got installed, else why it cannot be."""
    if not shutil.which("apt-get"):
        return "chromium is absent and there is no apt-get to install it"
    if os.geteuid() != 0:
        return "chromium is absent and installing it needs root (apt-get install chromium)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1200, env=env)
        if done.returncode:
            return f"chromium is absent and `{' '.join(cmd)}` failed: {done.stderr[-300:]}"
    return None if shutil.which("chromium") else "apt-get installed no chromium binary"


@pytest.fixture(scope="session")
def chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        reason = _install_chromium()
        if reason:
            pytest.skip(f"the page must be rendered by headless Chromium: {reason}")
        found = shutil.which("chromium")
    assert found is not None
    return found


class Browser:
    FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--virtual-time-budget=10000")

    def __init__(self, exe: str, tmp: Path):
        self.exe, self.tmp = exe, tmp

    def _run(self, url: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
        profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=self.tmp)
        done = subprocess.run([self.exe, *self.FLAGS, f"--user-data-dir={profile}", *args, url],
                              capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, done.stderr[-2000:]
        return done

    def dom(self, page: Path, fragment: str = "", timeout: float = 120) -> Page:
        done = self._run(page.as_uri() + fragment, "--dump-dom", timeout=timeout)
        parsed = Page()
        parsed.feed(done.stdout)
        assert parsed.graph.get("data-ready") == "true", "the page's script did not finish"
        return parsed

    def screenshot(self, page: Path, png: Path, fragment: str = "") -> Path:
        self._run(page.as_uri() + fragment, f"--screenshot={png}", "--window-size=1400,900",
                  timeout=120)
        assert png.stat().st_size > 10_000
        return png


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


def drawn_colours(png: Path) -> Counter[str]:
    """Pixel colours (#rrggbb) inside the graph canvas of a screenshot."""
    _, _, bpp, rows = png_rows(png)
    x0, y0, x1, y1 = GRAPH_AREA
    found: Counter[str] = Counter()
    for row in rows[y0:y1]:
        for x in range(x0, x1):
            found["#" + bytes(row[x * bpp:x * bpp + 3]).hex()] += 1
    return found


def expected_counts(plan: dict[str, Any], kinds: dict[str, str]) -> Counter[str]:
    """Nodes per colour, from the plan alone: each node in its highest disposition."""
    drawn: Counter[str] = Counter()
    for node_id, kind in kinds.items():
        found = [name for name, field in PRECEDENCE if node_id in plan[field]]
        drawn[found[-1] if found else kind] += 1
    return drawn


def recorded_kinds(cli: Cli, task_id: str) -> dict[str, str]:
    case = json.loads(cli("show", "--task", task_id, "--json").stdout)
    kinds = {u["input_id"]: "user_input" for u in case["session"]}
    kinds.update({m["memory_id"]: "memory" for m in case["memory_store"]})
    kinds.update({s["step_id"]: "step" for s in case["trace"]})
    return kinds


def ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, done.stderr
    return done


def repaired_page(cli: Cli, case: Path, tmp_path: Path) -> tuple[Path, dict[str, Any], str]:
    task_id = json.loads(case.read_text())["task_id"]
    ok(cli("ingest", str(case)))
    report = json.loads(ok(cli("repair", "--task", task_id, "--json")).stdout)
    page = tmp_path / "view.html"
    ok(cli("view", "--task", task_id, "--out", str(page)))
    return page, report, task_id


def check_legend(page: Page, expected: Counter[str]) -> None:
    counts = page.counts()
    assert {k: v for k, v in counts.items() if v} == dict(expected)
    assert sum(counts.values()) == page.nodes


def check_pixels(png: Path, page: Page, keys: set[str] | None = None) -> None:
    """Every colour the legend counts (or `keys` of them) fills pixels of the canvas."""
    pixels = drawn_colours(png)
    for key, count in page.counts().items():
        if count and (keys is None or key in keys):
            assert pixels[page.colour(key)] > 20, f"{key} ({page.colour(key)}) is not drawn"


def test_example_after_a_repair_renders_with_every_disposition_colour(
        cli: Cli, chromium: str, tmp_path: Path) -> None:
    page, report, task_id = repaired_page(cli, EXAMPLE, tmp_path)
    assert report["status"] == "repaired"
    kinds = recorded_kinds(cli, task_id)
    browser = Browser(chromium, tmp_path)

    before = browser.dom(page)
    assert (before.nodes, before.graph["data-phase"]) == (len(kinds), "before")
    expected = expected_counts(report["plan"], kinds)
    assert {"faulty", "replayed", "invalidated", "preserved"} <= set(expected)
    check_legend(before, expected)
    png = browser.screenshot(page, tmp_path / "view.png")
    check_pixels(png, before)

    new_nodes = len(report["replayed"]) + len(report["new_memory_ids"])
    after = browser.dom(page, "#phase=after&node=s_008")
    assert (after.nodes, after.graph["data-phase"]) == (len(kinds) + new_nodes, "after")
    check_legend(after, expected + Counter({"regenerated": new_nodes}))
    assert after.edges > before.edges
    assert after.details_node == "s_008" and after.why[0].startswith("rule 4: unsupported")
    for shown in ("StoreC currently sells P0199 at $88.67", "timestamp 202", "turn 2",
                  "ANSWER_RELEVANT", "Why"):
        assert shown in " ".join(after.details_text.split()), shown
    # After the repair, replaced nodes are faded (blended): only unblended colours are exact.
    check_pixels(browser.screenshot(page, tmp_path / "view-after.png", "#phase=after"), after,
                 {"regenerated", "preserved", "user_input"})

    seed = browser.dom(page, "#node=s_005")
    assert seed.why[0].startswith("rule 6: provenance seed r(m) of m_f003")
    print(f"screenshots: {png} and {tmp_path / 'view-after.png'}")


def test_quarantine_support_and_suspicious_colours(cli: Cli, chromium: str,
                                                  tmp_path: Path) -> None:
    page, report, task_id = repaired_page(cli, ALL_COLOURS_CASE, tmp_path)
    expected = expected_counts(report["plan"], recorded_kinds(cli, task_id))
    assert {"faulty", "quarantined", "supported", "suspicious", "replayed",
            "preserved"} <= set(expected)
    browser = Browser(chromium, tmp_path)
    before = browser.dom(page)
    check_legend(before, expected)
    check_pixels(browser.screenshot(page, tmp_path / "view.png"), before)


def test_a_task_without_runs_is_drawn_by_kind(cli: Cli, chromium: str, tmp_path: Path) -> None:
    ok(cli("ingest", str(EXAMPLE)))
    page = tmp_path / "plain.html"
    ok(cli("view", "--task", "shopping_task_014", "--out", str(page)))
    dom = Browser(chromium, tmp_path).dom(page, "#phase=after")
    assert dom.graph["data-phase"] == "before"
    assert "disabled" in dom.buttons["phase-after"]
    assert {k: v for k, v in dom.counts().items() if v} == {"user_input": 2, "memory": 5,
                                                           "step": 11}


def test_five_thousand_nodes_render_in_reasonable_time(cli: Cli, chromium: str,
                                                       tmp_path: Path) -> None:
    from provrepair.repair.bench.random_cases import random_case

    case = random_case(seed=11, n_steps=3810, layered=False)
    total = len(case.session) + len(case.memory_store) + len(case.trace)
    assert total >= 5000
    path = tmp_path / "big.json"
    path.write_text(json.dumps(case.model_dump(mode="json")))
    ok(cli("ingest", str(path), timeout=600))
    ok(cli("plan", "--task", case.task_id, timeout=600))
    page = tmp_path / "big.html"
    ok(cli("view", "--task", case.task_id, "--out", str(page), timeout=600))
    started = time.monotonic()
    dom = Browser(chromium, tmp_path).dom(page, timeout=300)
    elapsed = time.monotonic() - started
    assert dom.nodes == total
    assert sum(dom.counts().values()) == total
    assert int(dom.graph["data-render-ms"] or 0) < 60_000
    assert elapsed < 240, f"Chromium took {elapsed:.0f} s"


def test_view_errors(cli: Cli, tmp_path: Path) -> None:
    ok(cli("ingest", str(EXAMPLE)))
    missing = cli("view", "--task", "nope", "--out", str(tmp_path / "x.html"))
    assert (missing.returncode, missing.stderr.split(":")[0]) == (2, "TaskNotFound")
    no_run = cli("view", "--task", "shopping_task_014", "--run", "run-x", "--out",
                 str(tmp_path / "x.html"))
    assert no_run.returncode == 2 and "has no run 'run-x'" in no_run.stderr
    unwritable = cli("view", "--task", "shopping_task_014", "--out",
                     str(tmp_path / "no" / "such" / "dir.html"))
    assert (unwritable.returncode, unwritable.stderr.split(":")[0]) == (2, "InputError")
    assert not (tmp_path / "x.html").exists()
