"""The colours of the view and of the Neo4j Browser style: one table, two outputs.

A node is drawn in the colour of its *primary* disposition under the run shown: the last of
DISPOSITIONS (highest precedence) it has, else the colour of its kind. The Neo4j Browser
applies GraSS rules in file order, later rules overriding earlier ones, so `grass_text()`
writes the kind rules first and the dispositions in this same precedence order: a node with
the labels :Affected:Invalidated:Replayed is blue in the Browser as in the HTML view.

`python -m provrepair.view.palette > browser/provrepair.grass` regenerates the style file
(tests/unit/test_view_palette.py checks that the committed file is this output).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from provrepair.provenance.vocab import RunMark


@dataclass(frozen=True)
class Swatch:
    key: str          # disposition or kind key used by the page
    label: str        # Neo4j label carrying it (cypher/browser/label_latest_run.cypher)
    color: str
    border: str
    text: str         # caption colour inside the node (Neo4j Browser)
    legend: str       # legend text


# Node kinds: the colour of a node no run marked (and of every node when no run exists).
KINDS = (
    Swatch("user_input", "UserInput", "#68BDF6", "#5CA8DB", "#2A2C34", "user input"),
    Swatch("memory", "Memory", "#D9C8AE", "#C0A378", "#2A2C34", "memory (not touched)"),
    Swatch("step", "Step", "#A5ABB6", "#9AA1AC", "#2A2C34", "step (no run)"),
)

# Dispositions, lowest precedence first.
DISPOSITIONS = (
    Swatch("preserved", "Preserved", "#B7DDB0", "#8DBB85", "#2A2C34",
           "preserved step: not invalidated, kept"),
    Swatch("affected", "Affected", "#FFB347", "#E0912A", "#2A2C34",
           "affected: reached from a fault seed"),
    Swatch("supported", "Supported", "#2CA02C", "#1E7B1E", "#FFFFFF",
           "supported: independent evidence, kept (rule 3)"),
    Swatch("invalidated", "Invalidated", "#F2D43D", "#C9AE1F", "#2A2C34",
           "invalidated, refreshed through its replayed action"),
    Swatch("replayed", "Replayed", "#1F77B4", "#155A8A", "#FFFFFF",
           "replayed (rules 4, 6, 7 and closure)"),
    Swatch("suspicious", "Suspicious", "#8C564B", "#6B3F36", "#FFFFFF",
           "suspicious: invalidated, not replayed (rule 5)"),
    Swatch("quarantined", "Quarantined", "#9467BD", "#734C96", "#FFFFFF",
           "quarantined memory (rule 2)"),
    Swatch("faulty", "Faulty", "#D62728", "#A81D1E", "#FFFFFF",
           "faulty memory: deleted (rule 1)"),
    Swatch("regenerated", "Regenerated", "#17BECF", "#11919E", "#2A2C34",
           "written by the repair (replayed step, regenerated memory)"),
)

# Which run mark gives which disposition (SEED and ANSWER_RELEVANT only explain: see why.py).
MARK_DISPOSITION = {
    RunMark.PRESERVED: "preserved", RunMark.AFFECTED: "affected",
    RunMark.SUPPORTED: "supported", RunMark.INVALIDATED: "invalidated",
    RunMark.REPLAY: "replayed", RunMark.SUSPICIOUS: "suspicious",
    RunMark.QUARANTINED: "quarantined", RunMark.FAULTY: "faulty",
}

# Labels that only tag (no colour rule): the Browser can still query them.
TAG_LABELS = {RunMark.SEED: "Seed", RunMark.ANSWER_RELEVANT: "AnswerRelevant"}

PRECEDENCE = {swatch.key: rank for rank, swatch in enumerate(DISPOSITIONS)}

CAPTIONS = {"UserInput": "{id} · {content}", "Memory": "{id} · {content}",
            "Step": "{step_type} · {content}"}


def primary(dispositions: Iterable[str]) -> str | None:
    """The disposition a node is drawn in: the one of highest precedence, if any."""
    ranked = [d for d in dispositions if d in PRECEDENCE]
    return max(ranked, key=PRECEDENCE.__getitem__) if ranked else None


def page_palette() -> list[dict[str, str]]:
    """Kinds then dispositions, as the page's legend lists them."""
    return [{"key": s.key, "label": s.label, "color": s.color, "border": s.border,
             "legend": s.legend, "group": group}
            for group, swatches in (("kind", KINDS), ("disposition", DISPOSITIONS))
            for s in swatches]


def _rule(selector: str, props: dict[str, str]) -> str:
    body = "".join(f"  {key}: {value};\n" for key, value in props.items())
    return f"{selector} {{\n{body}}}\n"


def _colors(swatch: Swatch) -> dict[str, str]:
    return {"color": swatch.color, "border-color": swatch.border,
            "text-color-internal": swatch.text}


def grass_text() -> str:
    """The Neo4j Browser style (GraSS). Its parser knows no comments, and splits properties on
    ';' and ':' (so captions use neither); single quotes delimit strings."""
    rules = [
        _rule("node", {"diameter": "50px", "color": "#A5ABB6", "border-color": "#9AA1AC",
                       "border-width": "2px", "text-color-internal": "#2A2C34",
                       "font-size": "10px", "caption": "'{id}'"}),
        _rule("relationship", {"color": "#A5ABB6", "shaft-width": "1px", "font-size": "8px",
                               "padding": "3px", "text-color-external": "#000000",
                               "text-color-internal": "#FFFFFF", "caption": "'<type>'"}),
        _rule("relationship.REPLAYS", {"color": "#17BECF", "shaft-width": "3px"}),
        _rule("relationship.CHAIN", {"color": "#DDDDDD", "shaft-width": "1px"}),
        _rule("node.Task", {"color": "#555555", "border-color": "#333333",
                            "text-color-internal": "#FFFFFF", "caption": "'{task_id}'"}),
        _rule("node.RepairRun", {"color": "#2A2C34", "border-color": "#000000",
                                 "text-color-internal": "#FFFFFF",
                                 "caption": "'{method} {status}'"}),
    ]
    for swatch in KINDS:
        props = {**_colors(swatch), "caption": f"'{CAPTIONS[swatch.label]}'"}
        if swatch.key == "step":
            props["diameter"] = "60px"
        rules.append(_rule(f"node.{swatch.label}", props))
    rules += [_rule(f"node.{swatch.label}", _colors(swatch)) for swatch in DISPOSITIONS]
    return "\n".join(rules)


if __name__ == "__main__":  # pragma: no cover - regenerates browser/provrepair.grass
    print(grass_text(), end="")
