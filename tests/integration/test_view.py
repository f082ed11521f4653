"""`provrepair view` in a real browser: headless Debian Chromium renders the page offline, and
the test reads back from the DOM what the canvas draws (node count, nodes per colour, the
details of a node) and checks the screenshot's pixels for every colour the legend counts.
The browser is driven over the DevTools protocol (tests/chromium.py): every read waits until
the page says it is ready and has painted.

Chromium is installed when missing (apt-get, as root); the tests are skipped, with the
reason, only when it is absent and cannot be installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.chromium import Chromium, Page, drawn_colours
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
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq",
                                                   "--no-install-recommends", "chromium"]):
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


def expected_counts(plan: dict[str, Any], kinds: dict[str, str]) -> Counter[str]:
    """Nodes per colour, from the plan alone: each node in its highest disposition."""
    drawn: Counter[str] = Counter()
    for node_id, kind in kinds.items():
        found = [name for name, field in PRECEDENCE if node_id in plan[field]]
        drawn[found[-1] if found else kind] += 1
    return drawn


def recorded_kinds(cli: Cli, task_id: str) -> dict[str, str]:
    case = json.loads(cli("show", "--task", task_id, "--original", "--json").stdout)
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
    repaired = cli("repair", "--task", task_id, "--json")
    assert repaired.returncode in (0, 4), repaired.stderr  # 4: partial (no derivations)
    report = json.loads(repaired.stdout)
    page = tmp_path / "view.html"
    ok(cli("view", "--task", task_id, "--out", str(page)))
    return page, report, task_id


def check_legend(page: Page, expected: Counter[str]) -> None:
    counts = page.counts()
    assert {k: v for k, v in counts.items() if v} == dict(expected)
    assert sum(counts.values()) == page.nodes


def check_pixels(png: Path, page: Page, keys: set[str] | None = None) -> None:
    """Every colour the legend counts (or `keys` of them) fills pixels of the canvas."""
    pixels = drawn_colours(png, GRAPH_AREA)
    for key, count in page.counts().items():
        if count and (keys is None or key in keys):
            assert pixels[page.colour(key)] > 20, f"{key} ({page.colour(key)}) is not drawn"


def test_example_after_a_repair_renders_with_every_disposition_colour(
        cli: Cli, chromium: str, tmp_path: Path) -> None:
    page, report, task_id = repaired_page(cli, EXAMPLE, tmp_path)
    assert report["status"] == "repaired"
    kinds = recorded_kinds(cli, task_id)
    with Chromium(chromium, tmp_path) as browser:
        browser.open(page)
        before = browser.dom()
        assert (before.nodes, before.graph["data-phase"]) == (len(kinds), "before")
        expected = expected_counts(report["plan"], kinds)
        assert {"faulty", "replayed", "invalidated", "preserved"} <= set(expected)
        check_legend(before, expected)
        check_pixels(browser.screenshot(tmp_path / "view.png"), before)

        new_nodes = len(report["replayed"]) + len(report["new_memory_ids"])
        browser.open(page, "#phase=after&node=s_008")
        after = browser.dom()
        assert (after.nodes, after.graph["data-phase"]) == (len(kinds) + new_nodes, "after")
        check_legend(after, expected + Counter({"regenerated": new_nodes}))
        assert after.edges > before.edges
        assert after.details_node == "s_008" and after.why[0].startswith("rule 4: unsupported")
        for shown in ("StoreC currently sells P0199 at $88.67", "timestamp 202", "turn 2",
                      "ANSWER_RELEVANT", "Why"):
            assert shown in " ".join(after.details_text.split()), shown
        # After the repair, replaced nodes are faded (blended): only unblended colours are exact.
        browser.open(page, "#phase=after")
        check_pixels(browser.screenshot(tmp_path / "view-after.png"), after,
                     {"regenerated", "preserved", "user_input"})

        browser.open(page, "#node=s_005")
        assert browser.dom().why[0].startswith("rule 6: provenance seed r(m) of m_f003")


def test_quarantine_support_and_suspicious_colours(cli: Cli, chromium: str,
                                                  tmp_path: Path) -> None:
    page, report, task_id = repaired_page(cli, ALL_COLOURS_CASE, tmp_path)
    expected = expected_counts(report["plan"], recorded_kinds(cli, task_id))
    assert {"faulty", "quarantined", "supported", "suspicious", "replayed",
            "preserved"} <= set(expected)
    with Chromium(chromium, tmp_path) as browser:
        browser.open(page)
        before = browser.dom()
        check_legend(before, expected)
        check_pixels(browser.screenshot(tmp_path / "view.png"), before)


def test_a_task_without_runs_is_drawn_by_kind(cli: Cli, chromium: str, tmp_path: Path) -> None:
    ok(cli("ingest", str(EXAMPLE)))
    page = tmp_path / "plain.html"
    ok(cli("view", "--task", "shopping_task_014", "--out", str(page)))
    with Chromium(chromium, tmp_path) as browser:
        browser.open(page, "#phase=after")
        dom = browser.dom()
    assert dom.graph["data-phase"] == "before"
    assert "disabled" in dom.buttons["phase-after"]
    assert {k: v for k, v in dom.counts().items() if v} == {"user_input": 2, "memory": 5,
                                                           "step": 11}


def test_five_thousand_nodes_render(cli: Cli, chromium: str, tmp_path: Path) -> None:
    """Every node of a 5k-node task is drawn and counted (render speed: BENCHMARKS.md)."""
    from provrepair.benchmark.random_cases import random_case

    case = random_case(seed=11, n_steps=3810, layered=False)
    total = len(case.session) + len(case.memory_store) + len(case.trace)
    assert total >= 5000
    path = tmp_path / "big.json"
    path.write_text(json.dumps(case.model_dump(mode="json")))
    ok(cli("ingest", str(path), timeout=600))
    ok(cli("plan", "--task", case.task_id, timeout=600))
    page = tmp_path / "big.html"
    ok(cli("view", "--task", case.task_id, "--out", str(page), timeout=600))
    with Chromium(chromium, tmp_path, timeout=300) as browser:
        browser.open(page)
        dom = browser.dom()
    assert dom.nodes == total
    assert sum(dom.counts().values()) == total


# A node's label box (model coordinates, so at any zoom), and what the screen shows.
LABEL_BOXES = """(() => window.provrepairView.cy.nodes().map(n => {
  const b = n.boundingBox({includeNodes: false, includeEdges: false, includeLabels: true});
  return [n.data('nid'), b.x1, b.y1, b.x2, b.y2];
}))()"""
ON_SCREEN = """(() => {
  const cy = window.provrepairView.cy, e = cy.extent();
  const seen = cy.nodes().filter(n => { const p = n.position();
    return p.x >= e.x1 && p.x <= e.x2 && p.y >= e.y1 && p.y <= e.y2; });
  return {zoom: cy.zoom(), faults: cy.nodes('[disp = "faulty"]').map(n => n.data('nid')),
          seen: seen.map(n => n.data('nid')), dimmed: cy.nodes('.context').length};
})()"""
READABLE_ZOOM = 0.8   # view.js: 10 px labels are drawn from 7 px on screen


def overlapping_labels(boxes: list[list[Any]]) -> list[tuple[str, str]]:
    """Pairs of label boxes that intersect (a sweep along x)."""
    found, ordered = [], sorted(boxes, key=lambda b: b[1])
    for i, (name, _, y1, x2, y2) in enumerate(ordered):
        for other, ox1, oy1, _, oy2 in ordered[i + 1:]:
            if ox1 >= x2:
                break
            if oy1 < y2 and y1 < oy2:
                found.append((name, other))
    return found


def test_overlapping_labels_are_found() -> None:
    boxes = [["a", 0, 0, 10, 5], ["b", 9, 4, 20, 8], ["c", 10, 0, 12, 3], ["d", 0, 5, 5, 9]]
    assert overlapping_labels(boxes) == [("a", "b")]


@pytest.mark.parametrize(("size", "n_steps"), [(20, 13), (60, 43), (500, 373)])
def test_the_view_scales_with_the_region_focused(cli: Cli, chromium: str, tmp_path: Path,
                                                 size: int, n_steps: int) -> None:
    """A layered layout with no two labels overlapping; opened on the faults at a readable
    zoom (the rest dimmed when the whole graph is too big to read). Screenshots are kept."""
    from provrepair.benchmark.random_cases import random_case

    case = random_case(seed=7, n_steps=n_steps)
    assert len(case.session) + len(case.memory_store) + len(case.trace) == size
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case.model_dump(mode="json")))
    ok(cli("ingest", str(path)))
    ok(cli("plan", "--task", case.task_id))
    page = tmp_path / f"view-{size}.html"
    ok(cli("view", "--task", case.task_id, "--out", str(page)))
    with Chromium(chromium, tmp_path) as browser:
        browser.open(page)
        dom = browser.dom()
        shot = browser.screenshot(tmp_path / f"view-{size}.png")
        boxes = browser.evaluate(LABEL_BOXES)
        screen = browser.evaluate(ON_SCREEN)
    assert (dom.nodes, dom.graph["data-layout"]) == (size, "layered")
    assert len(boxes) == size and overlapping_labels(boxes) == []
    assert screen["zoom"] >= READABLE_ZOOM                     # labels are drawn
    assert screen["faults"] and set(screen["faults"]) <= set(screen["seen"])
    focused = dom.graph["data-focus"] == "region"
    assert (screen["dimmed"] > 0) == focused
    assert focused or len(screen["seen"]) == size              # else the whole graph is seen
    assert size < 500 or focused
    check_pixels(shot, dom, {"faulty"})


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
