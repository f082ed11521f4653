"""One palette, two outputs: browser/provrepair.grass (Neo4j Browser) and the HTML view.

The style file is read here the way Neo4j Browser reads it (a port of its GraphStyle parser
and rule cascade), so a caption its parser would cut, or a rule order that would colour a
multi-label node differently from the page, fails here.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from provrepair.provenance.vocab import RunMark
from provrepair.view.palette import (
    DISPOSITIONS,
    KINDS,
    MARK_DISPOSITION,
    TAG_LABELS,
    grass_text,
    page_palette,
    primary,
)

REPO = Path(__file__).resolve().parents[2]
GRASS = REPO / "browser" / "provrepair.grass"
LABEL_QUERY = REPO / "cypher" / "browser" / "label_latest_run.cypher"
SWATCH = {s.key: s for s in (*KINDS, *DISPOSITIONS)}


def browser_parse(text: str) -> dict[str, dict[str, str]]:
    """Neo4j Browser's GraSS parser: `'` delimits strings, a rule's body is split on ';',
    each property on ':' (only the first two parts kept); rules keep file order."""
    rules: dict[str, str] = {}
    inside_string = inside_props = False
    keyword = props = ""
    for c in text:
        if c == "{" and not inside_string:
            inside_props = True
            continue
        if c == "}" and not inside_string:
            inside_props = False
            rules[keyword], keyword, props = props, "", ""
            continue
        if c == "'":
            inside_string = not inside_string
            continue
        if inside_props:
            props += c
        elif not c.isspace():
            keyword += c
    parsed: dict[str, dict[str, str]] = {}
    for selector, body in rules.items():
        parsed[selector] = {}
        for prop in body.split(";"):
            parts = prop.split(":")
            if len(parts) > 1 and parts[0].strip() and parts[1].strip():
                parsed[selector][parts[0].strip()] = parts[1].strip()
    return parsed


def browser_colour(rules: dict[str, dict[str, str]], labels: set[str]) -> str:
    """The colour Browser gives a node: every matching rule in order, later ones winning."""
    colour = ""
    for selector, props in rules.items():
        tag, *classes = selector.split(".")
        if tag == "node" and set(classes) <= labels and "color" in props:
            colour = props["color"]
    return colour


def test_committed_style_is_the_generated_one() -> None:
    assert GRASS.read_text(encoding="utf-8") == grass_text(), \
        "regenerate: python -m provrepair.view.palette > browser/provrepair.grass"


def test_browser_reads_every_colour_and_caption() -> None:
    rules = browser_parse(GRASS.read_text(encoding="utf-8"))
    for swatch in (*KINDS, *DISPOSITIONS):
        rule = rules[f"node.{swatch.label}"]
        assert (rule["color"], rule["border-color"]) == (swatch.color, swatch.border)
    assert rules["node.Step"]["caption"] == "{step_type} · {content}"
    assert rules["node.Memory"]["caption"] == "{id} · {content}"
    assert rules["node.UserInput"]["caption"] == "{id} · {content}"
    assert rules["relationship"]["caption"] == "<type>"


@pytest.mark.parametrize("pair", list(itertools.combinations([s.key for s in DISPOSITIONS], 2)))
def test_multi_label_nodes_get_the_colour_the_page_draws(pair: tuple[str, str]) -> None:
    rules = browser_parse(GRASS.read_text(encoding="utf-8"))
    labels = {"Node", "Step", "Claim", "Seed", "AnswerRelevant", *(SWATCH[k].label for k in pair)}
    expected = primary(pair)
    assert expected is not None
    assert browser_colour(rules, labels) == SWATCH[expected].color


def test_unmarked_nodes_get_their_kind_colour() -> None:
    rules = browser_parse(GRASS.read_text(encoding="utf-8"))
    assert browser_colour(rules, {"Node", "Memory"}) == SWATCH["memory"].color
    assert browser_colour(rules, {"Node", "Step", "Plan"}) == SWATCH["step"].color
    assert browser_colour(rules, {"Node", "UserInput"}) == SWATCH["user_input"].color


def test_precedence() -> None:
    assert primary([]) is None
    assert primary(["affected", "invalidated", "replayed"]) == "replayed"
    assert primary(["supported", "replayed", "affected"]) == "replayed"   # seed: rule 6 wins
    assert primary(["invalidated", "suspicious"]) == "suspicious"
    assert primary(["affected", "supported"]) == "supported"
    assert primary(["affected", "quarantined"]) == "quarantined"
    assert primary(["unknown"]) is None


def test_every_run_mark_has_a_label_and_the_query_sets_exactly_those() -> None:
    text = LABEL_QUERY.read_text(encoding="utf-8")
    sets = dict(re.findall(r"type\(m\) = '(\w+)' THEN \[1\] ELSE \[\] END \| SET v:(\w+)\)", text))
    expected = {mark.value: SWATCH[disp].label for mark, disp in MARK_DISPOSITION.items()}
    expected.update({mark.value: label for mark, label in TAG_LABELS.items()})
    assert set(expected) == {mark.value for mark in RunMark}
    assert sets == expected
    removed = set(re.search(r"REMOVE n:([\w:]+)", text).group(1).split(":"))  # type: ignore[union-attr]
    assert removed == {*expected.values(), "Regenerated"}
    assert "SET g:Regenerated" in text


def test_page_palette_lists_kinds_then_dispositions() -> None:
    palette = page_palette()
    assert [p["key"] for p in palette] == [s.key for s in (*KINDS, *DISPOSITIONS)]
    assert len({p["color"].lower() for p in palette}) == len(palette), "colours must differ"
    assert {p["group"] for p in palette[:len(KINDS)]} == {"kind"}
